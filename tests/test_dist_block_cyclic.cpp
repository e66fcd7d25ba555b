// test_dist_block_cyclic.cpp - the block-cyclic index arithmetic of the
// distributed products (src/distributed/block_cyclic.h) against a brute-force deal
// of every entry, for first blocks smaller and larger than the others,
// every source process, replication and one process.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "distributed/block_cyclic.h"

namespace {

TEST(DistBlockCyclic, CountsOwnersAndLocalIndicesMatchADealOfEveryEntry) {
  for (int procs = 1; procs <= 5; ++procs)
    for (std::int64_t ib : {1, 2, 3, 7})
      for (std::int64_t b : {1, 2, 4, 5})
        for (int src = -1; src < procs; ++src) {
          const std::int64_t n = 41;
          // The deal: entry i goes to owner[i], as local entry local[i]
          // (the count of the owner's entries below i).
          std::vector<int> owner(n);
          std::vector<std::int64_t> local(n), held(std::size_t(procs), 0);
          for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t block = i < ib ? 0 : (i - ib) / b + 1;
            owner[i] = src < 0 ? -1 : int((src + block) % procs);
            local[i] = src < 0 ? i : held[std::size_t(owner[i])]++;
          }
          for (std::int64_t i = 0; i < n; ++i) {
            ASSERT_EQ(xn::dist::owner_of(i, ib, b, src, procs), owner[i])
                << i << " ib " << ib << " b " << b << " src " << src << " P " << procs;
            const int p = src < 0 ? 0 : owner[i];
            ASSERT_EQ(xn::dist::owned_below(i, ib, b, p, src, procs), local[i]) << i;
          }
          for (int p = 0; p < procs; ++p)
            for (std::int64_t first = 0; first <= n; ++first)
              for (std::int64_t count = 0; first + count <= n; count += 3) {
                std::int64_t want = 0;
                for (std::int64_t i = first; i < first + count; ++i)
                  want += src < 0 || owner[i] == p;
                ASSERT_EQ(xn::dist::local_count(count, first, ib, b, p, src, procs), want)
                    << "first " << first << " count " << count << " proc " << p;
              }
        }
}

// The descriptor forms: type 1 read as PBLAS's eleven entries (first block
// = block), type 2 as given, another type keeps only type and context.
TEST(DistBlockCyclic, DescriptorsReadAsPblasReadsThem) {
  const int d1[9] = {1, 7, 100, 90, 4, 5, 1, 0, 60};
  const xn::dist::Desc a = xn::dist::to_desc(d1);
  EXPECT_EQ(a.dtype, 1);
  EXPECT_EQ(a.ctxt, 7);
  EXPECT_EQ(a.m, 100);
  EXPECT_EQ(a.n, 90);
  EXPECT_EQ(a.imb, 4);
  EXPECT_EQ(a.mb, 4);
  EXPECT_EQ(a.inb, 5);
  EXPECT_EQ(a.nb, 5);
  EXPECT_EQ(a.rsrc, 1);
  EXPECT_EQ(a.csrc, 0);
  EXPECT_EQ(a.lld, 60);
  const int d2[11] = {2, 3, 10, 11, 2, 3, 4, 5, 0, 1, 12};
  const xn::dist::Desc b = xn::dist::to_desc(d2);
  EXPECT_EQ(b.imb, 2);
  EXPECT_EQ(b.inb, 3);
  EXPECT_EQ(b.mb, 4);
  EXPECT_EQ(b.nb, 5);
  EXPECT_EQ(b.lld, 12);
  const int d3[9] = {9, 4, 1, 1, 1, 1, 0, 0, 1};
  EXPECT_EQ(xn::dist::to_desc(d3).dtype, 9);
  EXPECT_EQ(xn::dist::to_desc(d3).ctxt, 4);
}

}  // namespace
