// Corrupted model files through the frameworks: for each format (ONNX, OpenVINO IR with both its
// .xml and .bin side, TorchScript, TFLite, GGUF, ncnn with both its .param and .bin side, MNN) seeded copies of a small real model are written
// empty, truncated, with a foreign header and with flipped bits, and one `infermark run` measures
// them all. Whatever a framework does with them, the parent must not crash, every cell must end
// as failed, crashed or timed out with a message naming the file and the cause (a flipped bit a
// framework tolerates may still load: `ok` is accepted for bit flips only), every result must be
// valid JSON (so valid UTF-8, however the framework quoted the broken bytes), and the table must
// be printed. docs/methodology.md ("Corrupted model files") lists what each framework does.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string_view>
#include <tuple>

#include "e2e/cli_test_support.hpp"

namespace {

using namespace infermark::testing;

struct Corruption {
  std::string name;
  std::string bytes;
  bool may_load = false;  // a bit flip (or overwritten weights) a framework may legitimately not notice
};

// Not a magic number of any format, and not UTF-8 (0xff, 0xfe, a NUL, a broken two-byte sequence):
// a framework that quotes the bytes it did not expect puts invalid UTF-8 into its message.
const std::string kForeignHeader(
    "\xff\xfe\x00"
    "BAD\xc3\x28",
    8);

// `count` bits flipped at positions drawn from mt19937(seed): the same file on every platform.
std::string flip_bits(std::string bytes, std::uint32_t seed, int count) {
  std::mt19937 random(seed);
  for (int i = 0; i < count; ++i) {
    const auto at = random() % bytes.size();
    bytes[at] = static_cast<char>(bytes[at] ^ (1u << (random() % 8)));
  }
  return bytes;
}

// A name in the file (`marker`, the byte `offset` into it) a framework quotes when it rejects it.
struct NameInFile {
  std::string marker;
  std::size_t offset = 0;
};

// Every corruption of `original` (at least 64 bytes). `has_header` says whether the file starts
// with something a reader checks (an OpenVINO IR's .bin starts with weights): if not, the foreign
// header only overwrites data and may load. With `name`, one byte of that name becomes 0xff: the
// framework's message then quotes a byte that is not UTF-8.
std::vector<Corruption> corruptions_of(const std::string& original, bool has_header = true,
                                       const std::optional<NameInFile>& name = std::nullopt) {
  const auto size = original.size();
  std::vector<Corruption> all{
      {"empty", "", false},
      {"cut1", original.substr(0, 1), false},
      {"cuthalf", original.substr(0, size / 2), false},
      {"cuttail", original.substr(0, size - 16), false},
      {"badheader", kForeignHeader + original.substr(kForeignHeader.size()), !has_header},
      {"flip1", flip_bits(original, 1, 1), true},
      {"flip8", flip_bits(original, 2, 8), true},
      {"flip64", flip_bits(original, 3, 64), true},
  };
  if (name) {
    auto bytes = original;
    const auto at = bytes.find(name->marker);
    EXPECT_NE(at, std::string::npos) << "no " << name->marker << " in the model";
    if (at != std::string::npos) {
      bytes[at + name->offset] = '\xff';
      all.push_back({"badname", bytes, true});
    }
  }
  return all;
}

std::size_t count_matches(const std::string& text, const char* pattern) {
  const std::regex regex(pattern);
  return static_cast<std::size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), regex), std::sregex_iterator()));
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  ASSERT_TRUE(out.good()) << path;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class CorruptModels : public CliTest {
 protected:
  // A scratch folder when `backend` is built; false (the test skipped) otherwise.
  bool ready(const std::string& backend) {
    prepare({backend}, "infermark_corrupt_");
    return !IsSkipped();
  }

  // The corrupted copy `<tag>-<corruption><ext>` of `source` (and, beside it, the source's zoo
  // manifest, which TorchScript needs for its inputs): the model files to run.
  void write_copies(const fs::path& source, const std::string& tag, const std::optional<NameInFile>& name = std::nullopt) {
    for (auto& c : corruptions_of(read_bytes(source), true, name)) {
      const auto copy = models() / (tag + "-" + c.name + source.extension().string());
      write_file(copy, c.bytes);
      copy_manifest(source, copy);
      add(copy, c);
    }
  }

  // The OpenVINO IR: each corruption of the .xml beside the intact .bin, then the other way round.
  void write_ir_copies(const fs::path& xml) {
    auto bin = xml;
    bin.replace_extension(".bin");
    for (const auto& [side, corrupted, intact] : {std::tuple{"xml", xml, bin}, std::tuple{"bin", bin, xml}}) {
      const bool xml_side = std::string_view(side) == "xml";
      // The xml's first <dim> value: OpenVINO quotes it when it is not a number.
      for (auto& c :
           corruptions_of(read_bytes(corrupted), xml_side, xml_side ? std::optional<NameInFile>({"<dim>", 5}) : std::nullopt)) {
        const auto copy = models() / ("ir" + std::string(side) + "-" + c.name + ".xml");
        auto copy_bin = copy;
        copy_bin.replace_extension(".bin");
        write_file(xml_side ? copy : copy_bin, c.bytes);
        fs::copy_file(intact, xml_side ? copy_bin : copy);
        add(copy, c);
      }
    }
  }

  // ncnn's pair: each corruption of the .param beside the intact .bin, then the other way round,
  // each copy with tiny_cnn's manifest (ncnn files name no tensors).
  void write_ncnn_copies(const fs::path& param) {
    const auto bin = param.parent_path() / "tiny_cnn.ncnn.bin";
    for (const auto& [side, corrupted, intact] : {std::tuple{"param", param, bin}, std::tuple{"bin", bin, param}}) {
      const bool param_side = std::string_view(side) == "param";
      // The .bin holds weights only: a foreign header overwrites data and may load.
      for (auto& c : corruptions_of(read_bytes(corrupted), param_side)) {
        const auto copy = models() / ("ncnn" + std::string(side) + "-" + c.name + ".param");
        const auto copy_bin = models() / ("ncnn" + std::string(side) + "-" + c.name + ".bin");
        write_file(param_side ? copy : copy_bin, c.bytes);
        fs::copy_file(intact, param_side ? copy_bin : copy);
        fs::copy_file(kModels / "tiny_cnn.json", models() / ("ncnn" + std::string(side) + "-" + c.name + ".json"));
        add(copy, c);
      }
    }
  }

  // A Paddle folder: each corruption of model.json beside the intact parameters, then the other
  // way round, each folder with tiny_cnn's manifest beside it (X2Paddle renames the tensors).
  void write_paddle_copies(const fs::path& folder) {
    for (const auto& [side, corrupted, intact] :
         {std::tuple{"json", "model.json", "model.pdiparams"}, std::tuple{"params", "model.pdiparams", "model.json"}}) {
      const bool json_side = std::string_view(side) == "json";
      for (auto& c : corruptions_of(read_bytes(folder / corrupted), json_side)) {
        const auto name = "paddle" + std::string(side) + "-" + c.name;
        const auto copy = models() / (name + ".paddle");
        fs::create_directories(copy);
        write_file(copy / corrupted, c.bytes);
        fs::copy_file(folder / intact, copy / intact);
        fs::copy_file(kModels / "tiny_cnn.json", models() / (name + ".json"));
        add(copy, c);
      }
    }
  }

  // `infermark run` over every copy, then the checks every outcome must pass.
  void run_and_check() {
    std::string files;
    for (const auto& [stem, file] : files_) files += " " + file.string();
    const auto r = infermark("run" + files + " --runs 2 --warmup 0 --timeout 60 --out " + (dir_ / "results").string());
    SCOPED_TRACE(r.out + r.err);

    // 1: some cell failed. Never 2 (a file refused up front), 70 (internal error) or a signal.
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err.find("terminate called"), std::string::npos);
    EXPECT_EQ(r.err.find("internal error"), std::string::npos);
    EXPECT_EQ(r.out.find("internal error"), std::string::npos);

    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(: (\d+) cell\(s\))"))) << "no plan line";
    const auto cells = std::stoul(m[1].str());
    EXPECT_GE(cells, files_.size());
    EXPECT_EQ(count_matches(r.out, R"((^|\n)\[\d+/\d+\] )"), cells);  // a progress line per cell
    // The table: a header, its rule and one row per cell, then where the results are.
    EXPECT_EQ(count_matches(r.out, R"(\n\| )"), cells + 2);
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\| backend +\| model +\|)")));
    for (const auto& [stem, file] : files_) EXPECT_NE(r.out.find("| " + stem + " "), std::string::npos) << "no row for " << stem;
    EXPECT_NE(r.out.find("\nresults: "), std::string::npos);

    std::size_t results = 0;
    std::map<std::string, std::size_t> results_per_file;
    for (const auto& run : fs::directory_iterator(dir_ / "results"))
      for (const auto& entry : fs::directory_iterator(run.path())) {
        if (entry.path().extension() != ".json") continue;
        ++results;
        check_result(entry.path(), results_per_file);
      }
    EXPECT_EQ(results, cells);
    for (const auto& [stem, file] : files_) EXPECT_GE(results_per_file[stem], 1u) << "no result for " << file;
    std::cout << summary_.str() << replaced_ << " message(s) quoted bytes that are not UTF-8, replaced by U+FFFD\n"
              << loaded_ << " cell(s) of " << cells << " loaded a file with flipped bits or a changed byte and were measured\n";
  }

 private:
  fs::path models() const {
    fs::create_directories(dir_ / "models");
    return dir_ / "models";
  }

  void copy_manifest(const fs::path& source, const fs::path& copy) {
    auto manifest = source, copy_manifest = copy;
    manifest.replace_extension(".json");
    copy_manifest.replace_extension(".json");
    if (fs::exists(manifest)) fs::copy_file(manifest, copy_manifest);
  }

  void add(const fs::path& file, const Corruption& c) {
    files_[file.stem().string()] = file;
    may_load_[file.stem().string()] = c.may_load;
  }

  void check_result(const fs::path& path, std::map<std::string, std::size_t>& per_file) {
    SCOPED_TRACE(path.string());
    nlohmann::json result;
    // nlohmann's parser rejects ill-formed UTF-8 in strings: valid JSON here is valid UTF-8 too.
    ASSERT_NO_THROW(result = nlohmann::json::parse(read_bytes(path)));
    const auto model = fs::path(result.at("model").at("path").get<std::string>());
    const auto stem = model.stem().string();
    ASSERT_TRUE(files_.count(stem)) << "a result for a file that was not run: " << model;
    ++per_file[stem];
    const auto status = result.at("status").get<std::string>();
    const auto error = result.at("error").get<std::string>();
    const auto backend = result.at("backend").at("name").get<std::string>();
    if (error.find("\xEF\xBF\xBD") != std::string::npos) ++replaced_;
    // The outcome in a line, the scratch folder left out.
    auto line = error;
    const auto folder = models().string() + "/";
    for (auto at = line.find(folder); at != std::string::npos; at = line.find(folder)) line.erase(at, folder.size());
    line = line.substr(0, 200);
    std::replace(line.begin(), line.end(), '\n', ' ');
    summary_ << "  " << backend << " " << stem << ": " << status << (line.empty() ? "" : ": " + line) << "\n";
    if (status == "ok") {
      EXPECT_TRUE(may_load_[stem]) << backend << " measured " << stem << ", which cannot be a loadable model";
      ++loaded_;
      return;
    }
    EXPECT_TRUE(status == "failed" || status == "crashed" || status == "timeout") << status;
    ASSERT_FALSE(error.empty()) << status << " without a message";
    EXPECT_EQ(error.find("internal error"), std::string::npos) << error;
    // The cause is given: no empty text after a colon (an exception's first line alone was, for OpenVINO).
    EXPECT_FALSE(std::regex_search(error, std::regex(R"(:\s*(\(while|$))"))) << error;
    // A load failure names the file.
    if (status == "failed") {
      EXPECT_NE(error.find(model.filename().string()), std::string::npos) << error;
    }
  }

  std::map<std::string, fs::path> files_;  // by stem, as the results name them
  std::map<std::string, bool> may_load_;
  std::size_t loaded_ = 0;
  std::size_t replaced_ = 0;  // messages with U+FFFD: invalid UTF-8 from a framework, made valid
  std::ostringstream summary_;

 protected:
  std::size_t replaced() const { return replaced_; }
};

}  // namespace

// Every ONNX reader built (ONNX Runtime, OpenVINO, OpenCV DNN) on each copy.
TEST_F(CorruptModels, OnnxCopiesEndAsFailedCellsWithMessages) {
  if (!ready("onnxruntime")) return;
  // "dilations", an attribute name of its Conv nodes: ONNX Runtime quotes the name it does not know.
  write_copies(kModels / "tiny_cnn.onnx", "onnx", NameInFile{"dilations", 2});
  run_and_check();
  EXPECT_GE(replaced(), 1u);
}

// The zoo's tinynet IR (built here in seconds): the .xml corrupted beside an intact .bin and the
// other way round.
TEST_F(CorruptModels, OpenVinoIrCopiesEndAsFailedCellsWithMessages) {
  if (!ready("openvino")) return;
  const auto zoo =
      infermark("zoo --models-dir " + (dir_ / "zoo").string() + " build tinynet --formats openvino-ir --precisions fp32");
  ASSERT_EQ(zoo.exit_code, 0) << zoo.out << zoo.err;
  write_ir_copies(dir_ / "zoo" / "tinynet.xml");
  run_and_check();
  EXPECT_GE(replaced(), 1u);
}

TEST_F(CorruptModels, TorchScriptCopiesEndAsFailedCellsWithMessages) {
  if (!ready("libtorch")) return;
  write_copies(kModels / "tiny_cnn.pt", "torchscript");
  run_and_check();
}

TEST_F(CorruptModels, TfliteCopiesEndAsFailedCellsWithMessages) {
  if (!ready("tflite")) return;
  write_copies(kModels / "tiny_cnn_tflite.tflite", "tflite");
  run_and_check();
}

TEST_F(CorruptModels, GgufCopiesEndAsFailedCellsWithMessages) {
  if (!ready("llamacpp")) return;
  write_copies(kModels / "llama-tiny.gguf", "gguf");
  run_and_check();
}

TEST_F(CorruptModels, NcnnCopiesEndAsFailedCellsWithMessages) {
  if (!ready("ncnn")) return;
  write_ncnn_copies(kModels / "tiny_cnn.ncnn.param");
  run_and_check();
}

TEST_F(CorruptModels, MnnCopiesEndAsFailedCellsWithMessages) {
  if (!ready("mnn")) return;
  write_copies(kModels / "tiny_cnn.mnn", "mnn");
  run_and_check();
}

TEST_F(CorruptModels, PaddleCopiesEndAsFailedCellsWithMessages) {
  if (!ready("paddle")) return;
  write_paddle_copies(kModels / "tiny_cnn.paddle");
  run_and_check();
}

// The program the zoo exports (fixture executorch_models, tests/CMakeLists.txt), with tiny_cnn's
// manifest beside each copy (a .pte names no tensors).
TEST_F(CorruptModels, ExecutorchCopiesEndAsFailedCellsWithMessages) {
  if (!ready("executorch")) return;
  write_copies(kModels / "tiny_cnn.pte", "executorch");
  run_and_check();
}
