// The creation cache (session.onyx_creation_cache_dir): a second creation maps the optimized
// graph and packed weights (outputs bit for bit those of an uncached session, and close to a
// double-precision reference), each kind of bad file is rejected with its reason and rewritten,
// the key follows the options that matter, and nothing is written without the entry.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/hash64.h"
#include "model_builder.h"
#include "onnx/model_loader.h"
#include "platform/thread_pool.h"
#include "runtime/creation_cache.h"
#include "runtime/session_impl.h"

namespace onyx {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kN = 2, kC = 16, kH = 10, kW = 10, kM = 32, kK = 16, kOut = 24;

// x [2, 16, 10, 10] -> Conv 3x3 pad 1 (W1, B1) -> Relu -> Conv 1x1 (W2) -> GlobalAveragePool
// -> Flatten -> MatMul (Wm [16, 24]) -> y [2, 24]: a Winograd or direct conv, a 1x1 conv and a
// packed SGEMM weight.
std::string Model() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {kN, kC, kH, kW});
  b.Initializer("W1", test::PatternTensor({kM, kC, 3, 3}, 1));
  b.Initializer("B1", test::PatternTensor({kM}, 2));
  b.Initializer("W2", test::PatternTensor({kK, kM, 1, 1}, 3));
  b.Initializer("Wm", test::PatternTensor({kK, kOut}, 4));
  b.Node("Conv", {"x", "W1", "B1"}, {"c1"}).attributes = {test::IntsAttr("pads", {1, 1, 1, 1})};
  b.Node("Relu", {"c1"}, {"r1"});
  b.Node("Conv", {"r1", "W2"}, {"c2"});
  b.Node("GlobalAveragePool", {"c2"}, {"g"});
  b.Node("Flatten", {"g"}, {"f"});
  b.Node("MatMul", {"f", "Wm"}, {"y"});
  b.Output("y", DataType::kFloat, {kN, kOut});
  return b.Bytes();
}

// The model in double precision, straight from its definition.
std::vector<double> Reference(const Tensor& x) {
  const Tensor w1 = test::PatternTensor({kM, kC, 3, 3}, 1), b1 = test::PatternTensor({kM}, 2), w2 = test::PatternTensor({kK, kM, 1, 1}, 3),
               wm = test::PatternTensor({kK, kOut}, 4);
  std::vector<double> y(kN * kOut, 0.0);
  for (int64_t n = 0; n < kN; ++n) {
    std::vector<double> r(kM * kH * kW);
    for (int64_t m = 0; m < kM; ++m)
      for (int64_t i = 0; i < kH; ++i)
        for (int64_t j = 0; j < kW; ++j) {
          double s = b1.data<float>()[m];
          for (int64_t c = 0; c < kC; ++c)
            for (int64_t di = 0; di < 3; ++di)
              for (int64_t dj = 0; dj < 3; ++dj) {
                const int64_t ii = i + di - 1, jj = j + dj - 1;
                if (ii < 0 || ii >= kH || jj < 0 || jj >= kW) continue;
                s += static_cast<double>(x.data<float>()[((n * kC + c) * kH + ii) * kW + jj]) *
                     w1.data<float>()[((m * kC + c) * 3 + di) * 3 + dj];
              }
          r[(m * kH + i) * kW + j] = std::max(s, 0.0);
        }
    std::vector<double> g(kK, 0.0);
    for (int64_t k = 0; k < kK; ++k) {
      for (int64_t p = 0; p < kH * kW; ++p)
        for (int64_t m = 0; m < kM; ++m) g[k] += w2.data<float>()[k * kM + m] * r[m * kH * kW + p];
      g[k] /= static_cast<double>(kH * kW);
    }
    for (int64_t o = 0; o < kOut; ++o)
      for (int64_t k = 0; k < kK; ++k) y[n * kOut + o] += g[k] * wm.data<float>()[k * kOut + o];
  }
  return y;
}

class CreationCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("onyx_creation_cache_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    bytes_ = Model();
    options_.intra_op_num_threads = 1;
    options_.config_entries[kConfigCreationCacheDir] = dir_.string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<SessionImpl> Create(const SessionOptions& options) {
    return std::make_unique<SessionImpl>(ModelSource{"", bytes_.data(), bytes_.size()}, options);
  }
  std::vector<float> RunOnce(const SessionImpl& s) {
    const auto out = s.Run({{"x", Value(test::PatternTensor({kN, kC, kH, kW}, 9))}}, {}, RunOptions{});
    const Tensor& y = out[0].tensor();
    return std::vector<float>(y.data<float>(), y.data<float>() + y.size());
  }
  std::vector<fs::path> CacheFiles() const {
    std::vector<fs::path> files;
    if (!fs::exists(dir_)) return files;
    for (const auto& e : fs::directory_iterator(dir_)) files.push_back(e.path());
    return files;
  }
  fs::path CacheFile() const {
    return dir_ / MakeCreationCacheKey(bytes_.data(), bytes_.size(), options_, nullptr).FileName();
  }
  // A session from the cache after `spoil` changed its file: rejected naming `reason`, rebuilt,
  // and the next one hits again.
  void ExpectRejectedAndRewritten(const std::function<void()>& spoil, const std::string& reason) {
    Create(options_);
    spoil();
    auto rejected = Create(options_);
    EXPECT_EQ(rejected->creation_cache_status().rfind("rejected: ", 0), 0u) << rejected->creation_cache_status();
    EXPECT_NE(rejected->creation_cache_status().find(reason), std::string::npos) << rejected->creation_cache_status();
    EXPECT_EQ(RunOnce(*rejected), RunOnce(*Create(SessionOptions{})));
    EXPECT_EQ(Create(options_)->creation_cache_status(), "hit");
  }
  // Replaces the cache file by one made for `key` (same hash, other texts), with no packs.
  void WriteWithKey(const CreationCacheKey& key) {
    auto model = LoadModelFromBytes(bytes_.data(), bytes_.size());
    CreationCacheWriter writer(dir_.string(), key, *model, {}, nullptr);
    writer.Commit();
  }

  fs::path dir_;
  std::string bytes_;
  SessionOptions options_;
};

TEST_F(CreationCacheTest, HitMapsPacksAndMatchesUncachedBitForBit) {
  const std::vector<float> uncached = RunOnce(*Create(SessionOptions{}));
  const std::vector<double> ref = Reference(test::PatternTensor({kN, kC, kH, kW}, 9));
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(uncached[i], ref[i], 1e-4 + 1e-4 * std::fabs(ref[i])) << i;

  auto miss = Create(options_);
  EXPECT_EQ(miss->creation_cache_status(), "miss");
  EXPECT_GE(miss->creation_cache_packs_made(), 3);  // both convs and the MatMul
  EXPECT_EQ(RunOnce(*miss), uncached);
  EXPECT_FALSE(miss->optimization_report().FusedOperatorStatistics().empty());  // Conv + Relu fused
  ASSERT_EQ(CacheFiles().size(), 1u);  // no temporary left behind
  EXPECT_EQ(CacheFiles()[0], CacheFile());

  auto hit = Create(options_);
  EXPECT_EQ(hit->creation_cache_status(), "hit");
  EXPECT_EQ(hit->creation_cache_packs_reused(), miss->creation_cache_packs_made());
  EXPECT_EQ(hit->creation_cache_packs_made(), 0);
  // The optimizer did not run; its report came with the file.
  EXPECT_EQ(hit->optimization_report().FusedOperatorStatistics(), miss->optimization_report().FusedOperatorStatistics());
  EXPECT_EQ(hit->optimization_report().op_counts_after, miss->optimization_report().op_counts_after);
  EXPECT_EQ(RunOnce(*hit), uncached);
}

TEST_F(CreationCacheTest, TruncatedFileIsRejected) {
  ExpectRejectedAndRewritten([&] { fs::resize_file(CacheFile(), fs::file_size(CacheFile()) - 100); },
                             "trailer");
}

TEST_F(CreationCacheTest, FlippedGraphByteIsRejected) {
  ExpectRejectedAndRewritten(
      [&] {
        // The graph sits just before the metadata; its offset is in the trailer (third u64).
        std::fstream f(CacheFile(), std::ios::in | std::ios::out | std::ios::binary);
        f.seekg(-64 + 16, std::ios::end);
        uint64_t graph_offset = 0;
        f.read(reinterpret_cast<char*>(&graph_offset), 8);
        f.seekg(static_cast<std::streamoff>(graph_offset + 10));
        char c = 0;
        f.read(&c, 1);
        c ^= 0x20;
        f.seekp(static_cast<std::streamoff>(graph_offset + 10));
        f.write(&c, 1);
      },
      "checksum");
}

TEST_F(CreationCacheTest, FileOfAnotherBuildCpuOrOptionsIsRejected) {
  const CreationCacheKey key = MakeCreationCacheKey(bytes_.data(), bytes_.size(), options_, nullptr);
  CreationCacheKey other = key;
  other.build = "onyx 0.0.9 format 1";
  ExpectRejectedAndRewritten([&] { WriteWithKey(other); }, "another Onyx build");
  other = key;
  other.cpu = "avx2=1 sgemm=f32_gemm_avx2_6x16";
  ExpectRejectedAndRewritten([&] { WriteWithKey(other); }, "other CPU features");
  other = key;
  other.options = "level=1";
  ExpectRejectedAndRewritten([&] { WriteWithKey(other); }, "other session options");
}

TEST_F(CreationCacheTest, KeyFollowsTheOptionsThatMatter) {
  auto hash = [&](const SessionOptions& o) { return MakeCreationCacheKey(bytes_.data(), bytes_.size(), o, nullptr).hash; };
  const uint64_t base = hash(options_);
  EXPECT_EQ(hash(options_), base);
  std::vector<SessionOptions> changed(5, options_);
  changed[0].graph_optimization_level = GraphOptimizationLevel::kBasic;
  changed[1].config_entries["optimization.disable_specified_optimizers"] = "ConvActivationFusion";
  changed[2].intra_op_num_threads = 2;
  changed[3].free_dimension_overrides_by_name["batch"] = 1;
  changed[4].initializers.emplace_back("Wm", test::PatternTensor({kK, kOut}, 5));
  for (size_t i = 0; i < changed.size(); ++i) EXPECT_NE(hash(changed[i]), base) << i;
  // The folder itself is not part of the key; another model is.
  SessionOptions elsewhere = options_;
  elsewhere.config_entries[kConfigCreationCacheDir] = "other";
  EXPECT_EQ(hash(elsewhere), base);
  std::string other_model = bytes_;
  other_model[other_model.size() / 2] ^= 1;
  EXPECT_NE(MakeCreationCacheKey(other_model.data(), other_model.size(), options_, nullptr).hash, base);
}

TEST_F(CreationCacheTest, FileStatKeyFollowsTheFileNotItsBytes) {
  fs::create_directories(dir_);
  const fs::path model = dir_ / "model.onnx";
  std::ofstream(model, std::ios::binary) << bytes_;
  SessionOptions by_stat = options_;
  by_stat.config_entries[kConfigCreationCacheKey] = "file_stat";
  auto hash = [&](const SessionOptions& o) { return MakeCreationCacheKey(model.string(), o, nullptr).hash; };
  const uint64_t content = hash(options_), stat = hash(by_stat);
  EXPECT_NE(content, stat);
  EXPECT_EQ(hash(by_stat), stat);
  // The same bytes written again: the content key stays, the file's identity (times) changes.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::ofstream(model, std::ios::binary | std::ios::trunc) << bytes_;
  EXPECT_EQ(hash(options_), content);
  EXPECT_NE(hash(by_stat), stat);
  // Both create through the cache and hit the second time.
  for (const SessionOptions& o : {options_, by_stat}) {
    EXPECT_EQ(SessionImpl(ModelSource{model.string()}, o).creation_cache_status(), "miss");
    EXPECT_EQ(SessionImpl(ModelSource{model.string()}, o).creation_cache_status(), "hit");
  }
  // Its value is checked, and it needs the folder.
  SessionOptions bad = by_stat;
  bad.config_entries[kConfigCreationCacheKey] = "mtime";
  EXPECT_THROW(SessionImpl(ModelSource{model.string()}, bad), Error);
  bad = by_stat;
  bad.config_entries.erase(kConfigCreationCacheDir);
  try {
    Session s(model.string(), bad);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs session.onyx_creation_cache_dir"), std::string::npos) << e.what();
  }
}

TEST_F(CreationCacheTest, NothingIsWrittenWithoutTheEntry) {
  SessionOptions plain = options_;
  plain.config_entries.clear();
  EXPECT_EQ(Create(plain)->creation_cache_status(), "off");
  Session s(bytes_.data(), bytes_.size(), plain);
  EXPECT_EQ(s.creation_cache_status(), "off");
  EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(CreationCacheTest, ConcurrentCreatorsLeaveOneValidFile) {
  std::vector<std::thread> threads;
  std::vector<std::vector<float>> outputs(4);
  for (size_t i = 0; i < outputs.size(); ++i)
    threads.emplace_back([&, i] { outputs[i] = RunOnce(*Create(options_)); });
  for (auto& t : threads) t.join();
  const std::vector<float> uncached = RunOnce(*Create(SessionOptions{}));
  for (const auto& out : outputs) EXPECT_EQ(out, uncached);
  ASSERT_EQ(CacheFiles().size(), 1u);
  EXPECT_EQ(Create(options_)->creation_cache_status(), "hit");
}

TEST_F(CreationCacheTest, UnwritableFolderStillCreates) {
  fs::create_directories(dir_.parent_path());
  std::ofstream(dir_) << "a file, not a folder";
  auto s = Create(options_);
  EXPECT_EQ(s->creation_cache_status().rfind("unwritable: ", 0), 0u) << s->creation_cache_status();
  EXPECT_EQ(RunOnce(*s), RunOnce(*Create(SessionOptions{})));
}

TEST(Hash64, SeparatesInputsAndPieces) {
  const std::string a = "the quick brown fox jumps over the lazy dog, again and again";
  std::string b = a;
  b[40] ^= 1;
  EXPECT_NE(Hash64(a.data(), a.size()), Hash64(b.data(), b.size()));
  EXPECT_NE(Hash64(a.data(), a.size()), Hash64(a.data(), a.size() - 1));
  EXPECT_NE(Hash64(a.data(), a.size(), 1), Hash64(a.data(), a.size(), 2));
  EXPECT_EQ(Hash64(a.data(), a.size()), Hash64(std::string(a).data(), a.size()));
  EXPECT_NE(Hasher64().Add("ab").Add("c").Digest(), Hasher64().Add("a").Add("bc").Digest());
  EXPECT_EQ(Hash64(nullptr, 0), Hash64("", 0));  // an empty file maps nothing
  // Large inputs hash by chunks; one byte anywhere still changes the result.
  std::vector<uint8_t> big(size_t{20} << 20, 7);
  const uint64_t h = HashFileBytes(big.data(), big.size(), nullptr);
  big[big.size() - 3] = 8;
  EXPECT_NE(HashFileBytes(big.data(), big.size(), nullptr), h);
}

// A file's content hash is read through a small buffer, by 1 MB chunks in parallel: it equals
// HashFileBytes of the same bytes at every size around the chunk and buffer edges, for any
// thread count, and one byte changed anywhere (the last one too) changes the model's key.
TEST(HashFile, EqualsTheBytesHashAndSeesEveryByte) {
  const fs::path dir = fs::temp_directory_path() / ("onyx_hashfile_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "m.bin").string();
  ThreadPool pool(2);
  constexpr size_t kMB = size_t{1} << 20;
  for (const size_t size : std::vector<size_t>{0, 1, 65, 256 * 1024 + 1, kMB, kMB + 1, 17 * kMB + 3}) {
    std::vector<uint8_t> bytes(size);
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
    auto write = [&] { std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), size); };
    write();
    uint64_t got_size = 0;
    const uint64_t h = HashFile(path, nullptr, &got_size);
    EXPECT_EQ(got_size, size);
    EXPECT_EQ(h, HashFileBytes(bytes.data(), size, nullptr)) << size;
    EXPECT_EQ(HashFile(path, &pool, &got_size), h) << size;
    const CreationCacheKey key = MakeCreationCacheKey(path, SessionOptions{}, &pool);
    EXPECT_EQ(key.hash, MakeCreationCacheKey(bytes.data(), size, SessionOptions{}, nullptr).hash);
    if (size == 0) continue;
    for (size_t at : {size_t{0}, size / 2, size - 1}) {
      bytes[at] ^= 0x10;
      write();
      EXPECT_NE(HashFile(path, &pool, &got_size), h) << "size " << size << " byte " << at;
      EXPECT_NE(MakeCreationCacheKey(path, SessionOptions{}, &pool).hash, key.hash) << "size " << size << " byte " << at;
      bytes[at] ^= 0x10;
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace onyx
