xn_add_test(test_nearsum LABELS unit SOURCES test_nearsum.cpp)
