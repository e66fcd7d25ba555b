// bench_calibrate.h - xnbench calibrate (bench_calibrate.cpp).
#pragma once

namespace xnb {

// xnbench calibrate [--no-measure]: returns the process's exit status.
int run_calibrate(int argc, char **argv);

}  // namespace xnb
