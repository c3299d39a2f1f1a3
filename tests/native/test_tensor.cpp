// Tensor views: view/transpose/slice without copies, contiguous() packing, and their errors.
#include "attention.hpp"
#include "fixtures.hpp"

using attn::Tensor;

TEST_CASE("transpose and slice are views; contiguous packs them in row-major order", "[tensor]") {
  Tensor t = Tensor::from({2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor tt = t.transpose(0, 1);
  CHECK(tt.shape() == attn::Shape{3, 2});
  CHECK_FALSE(tt.is_contiguous());
  CHECK(tt.to_vector() == std::vector<float>{0, 3, 1, 4, 2, 5});
  Tensor s = t.slice(1, 1, 3);
  CHECK(s.to_vector() == std::vector<float>{1, 2, 4, 5});
  t.data()[1] = 10;  // views share storage
  CHECK(s.to_vector()[0] == 10);
  CHECK(t.view({3, -1}).shape() == attn::Shape{3, 2});
  CHECK(t.unsqueeze(0).shape() == attn::Shape{1, 2, 3});
}

TEST_CASE("split and merge heads round-trip as the seeds' view/transpose do", "[tensor]") {
  std::vector<float> v(2 * 3 * 8);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  Tensor x = Tensor::from({2, 3, 8}, v);
  Tensor h = x.view({2, 3, 4, 2}).transpose(1, 2);  // (B, H, T, D)
  CHECK(h.shape() == attn::Shape{2, 4, 3, 2});
  CHECK(h.contiguous().data()[2] == 8.f);  // head 0, token 1, d 0 = x[0, 1, 0]
  Tensor back = h.transpose(1, 2).contiguous().view({2, 3, 8});
  CHECK(back.to_vector() == v);
}

TEST_CASE("bad views and data lengths throw attn::Error with the sizes", "[tensor][errors]") {
  Tensor t = Tensor::from({2, 3}, {0, 1, 2, 3, 4, 5});
  CHECK_THROWS_WITH(t.view({4, 2}), Catch::Contains("[2, 3]") && Catch::Contains("[4, 2]"));
  CHECK_THROWS_WITH(Tensor::from({2, 2}, {1, 2, 3}), Catch::Contains("3 values") && Catch::Contains("needs 4"));
  CHECK_THROWS_AS(t.transpose(0, 1).view({6}), attn::Error);
  CHECK_THROWS_AS(t.slice(1, 2, 5), attn::Error);
}
