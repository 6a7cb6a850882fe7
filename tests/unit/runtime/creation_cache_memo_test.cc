// The creation cache's default key remembers a model file's content hash by the file's identity
// (creation_cache_hash_memo.h): the record is used while the file is unchanged, never written
// for a file changed too recently to trust its times, and a byte changed in place misses even
// with the modification time put back; "content_always" never uses a record.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/hash64.h"
#include "model_builder.h"
#include "runtime/creation_cache.h"
#include "runtime/creation_cache_hash_memo.h"
#include "runtime/session_impl.h"

namespace onyx {
namespace {

namespace fs = std::filesystem;

// y = x * W + B over [1, 8]: W's bytes are in the file, so flipping one changes the outputs.
std::string Model(float w) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {1, 8});
  Tensor weight(DataType::kFloat, {8});
  for (int i = 0; i < 8; ++i) weight.data<float>()[i] = w + static_cast<float>(i);
  b.Initializer("W", weight);
  b.Initializer("B", test::PatternTensor({8}, 2));
  b.Node("Mul", {"x", "W"}, {"m"});
  b.Node("Add", {"m", "B"}, {"y"});
  b.Output("y", DataType::kFloat, {1, 8});
  return b.Bytes();
}

class HashMemoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() / ("onyx_hash_memo_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    model_ = (root_ / "model.onnx").string();
    cache_ = (root_ / "cache").string();
    Write(Model(1.0f));
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const std::string& bytes) { std::ofstream(model_, std::ios::binary | std::ios::trunc) << bytes; }
  FileIdentity Identity() const {
    struct stat st{};
    EXPECT_EQ(::stat(model_.c_str(), &st), 0);
    return IdentityOf(st);
  }
  int64_t CtimeNs() const { return Identity().ctime_s * 1000000000 + Identity().ctime_ns; }
  std::string Abs() const { return fs::absolute(model_).string(); }
  uint64_t Hash(FileKeyMode mode, int64_t now_ns) const {
    uint64_t size = 0;
    return HashFile(model_, nullptr, &size, FileHashOptions{mode, cache_, now_ns});
  }
  uint64_t TrueHash() const {
    uint64_t size = 0;
    return HashFile(model_, nullptr, &size);  // no folder: every byte, every time
  }
  bool HasRecord() const {
    if (!fs::exists(cache_)) return false;
    for (const auto& e : fs::directory_iterator(cache_))
      if (e.path().extension() == ".hash") return true;
    return false;
  }

  fs::path root_;
  std::string model_, cache_;
};

TEST_F(HashMemoTest, SettledFileIsRememberedAndTheRecordIsUsed) {
  const uint64_t truth = TrueHash();
  EXPECT_EQ(Hash(FileKeyMode::kContent, CtimeNs() + kSettledNs + 1), truth);
  ASSERT_TRUE(HasRecord());
  EXPECT_EQ(RecallContentHash(cache_, Abs(), Identity()), truth);
  // A record saying otherwise is believed (so the record, not a fresh read, gave the hash)...
  ASSERT_TRUE(RememberContentHash(cache_, Abs(), Identity(), Identity(), truth ^ 1, CtimeNs() + kSettledNs));
  EXPECT_EQ(Hash(FileKeyMode::kContent, CtimeNs() + kSettledNs + 1), truth ^ 1);
  // ...except by content_always, which reads every byte every time.
  EXPECT_EQ(Hash(FileKeyMode::kContentAlways, CtimeNs() + kSettledNs + 1), truth);
  // A record for another path or identity is not this file's.
  FileIdentity other = Identity();
  other.size += 1;
  EXPECT_FALSE(RecallContentHash(cache_, Abs(), other).has_value());
  EXPECT_FALSE(RecallContentHash(cache_, Abs() + "x", Identity()).has_value());
}

TEST_F(HashMemoTest, RecentlyChangedFileIsNotRemembered) {
  const uint64_t truth = TrueHash();
  EXPECT_EQ(Hash(FileKeyMode::kContent, CtimeNs() + kSettledNs - 1), truth);
  EXPECT_FALSE(HasRecord());
  // Nor one whose identity changed while it was read.
  FileIdentity after = Identity();
  after.mtime_ns += 1;
  EXPECT_FALSE(RememberContentHash(cache_, Abs(), Identity(), after, truth, CtimeNs() + kSettledNs));
  EXPECT_FALSE(HasRecord());
}

TEST_F(HashMemoTest, CorruptRecordIsIgnored) {
  const uint64_t truth = TrueHash();
  Hash(FileKeyMode::kContent, CtimeNs() + kSettledNs + 1);
  ASSERT_TRUE(HasRecord());
  for (const auto& e : fs::directory_iterator(cache_)) {
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8 + 7 * 8);  // the remembered hash: the checksum no longer matches
    f.put('\x5a');
  }
  EXPECT_FALSE(RecallContentHash(cache_, Abs(), Identity()).has_value());
  EXPECT_EQ(Hash(FileKeyMode::kContent, CtimeNs() + kSettledNs + 1), truth);
}

// A weight byte rewritten in place, same size, modification time put back (what fools an
// mtime check): the change time moved, so the model is hashed again and the session misses and
// computes with the new weight.
TEST_F(HashMemoTest, ByteChangedInPlaceWithTimesPutBackMisses) {
  SessionOptions options;
  options.intra_op_num_threads = 1;
  options.config_entries[kConfigCreationCacheDir] = cache_;
  const FileIdentity before = Identity();
  // Remember the hash as a creation long after the write would (the test cannot wait 3 s).
  ASSERT_TRUE(RememberContentHash(cache_, Abs(), before, before, TrueHash(), CtimeNs() + kSettledNs));
  EXPECT_EQ(SessionImpl(ModelSource{model_}, options).creation_cache_status(), "miss");
  EXPECT_EQ(SessionImpl(ModelSource{model_}, options).creation_cache_status(), "hit");

  // The weights 3 + i instead of 1 + i: the same size, written over the old bytes in place.
  const std::string new_bytes = Model(3.0f);
  ASSERT_EQ(new_bytes.size(), Model(1.0f).size());
  {
    std::fstream f(model_, std::ios::in | std::ios::out | std::ios::binary);
    f.write(new_bytes.data(), static_cast<std::streamsize>(new_bytes.size()));
  }
  const timespec times[2] = {{before.mtime_s, before.mtime_ns}, {before.mtime_s, before.mtime_ns}};
  ASSERT_EQ(::utimensat(AT_FDCWD, model_.c_str(), times, 0), 0);
  ASSERT_EQ(Identity().mtime_ns, before.mtime_ns);
  ASSERT_EQ(Identity().size, before.size);

  SessionImpl changed(ModelSource{model_}, options);
  EXPECT_EQ(changed.creation_cache_status(), "miss");
  Tensor x(DataType::kFloat, {1, 8});
  for (int i = 0; i < 8; ++i) x.data<float>()[i] = 1.0f;
  const auto out = changed.Run({{"x", Value(x)}}, {}, RunOptions{});
  // y = 1 * W + B, by hand, with the new weights.
  const Tensor b = test::PatternTensor({8}, 2);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(out[0].tensor().data<float>()[i], (3.0f + static_cast<float>(i)) + b.data<float>()[i]) << i;
}

}  // namespace
}  // namespace onyx
