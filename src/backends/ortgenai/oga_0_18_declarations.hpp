// The part of ONNX Runtime GenAI's C API (ort_genai_c.h) that infermark calls, declared here
// because no registry these machines reach carries the header: PyPI's wheel ships the library
// only, and the NuGet package with the header is out of reach. Checked against the library of
// onnxruntime-genai 0.18.0 (scripts/setup pins it; OgaApi::open refuses another version). Only
// the generator, tokenizer, config and tensor calls are declared; every one of them has kept its
// signature since 0.5.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

struct OgaResult;
struct OgaConfig;
struct OgaModel;
struct OgaGeneratorParams;
struct OgaGenerator;
struct OgaSequences;
struct OgaTokenizer;
struct OgaTensor;

// Element types of OgaTensor, in the header's order (only float32 is read here).
enum OgaElementType : int { OgaElementType_undefined = 0, OgaElementType_float32 = 1, OgaElementType_float16 = 10 };

// Every call that can fail returns an OgaResult owning the message, or nullptr on success.
const char* OgaResultGetError(const OgaResult* result);
void OgaDestroyResult(OgaResult* result);
void OgaDestroyString(const char* text);

OgaResult* OgaCreateConfig(const char* config_path, OgaConfig** out);
OgaResult* OgaConfigOverlay(OgaConfig* config, const char* json);
OgaResult* OgaConfigClearProviders(OgaConfig* config);
void OgaDestroyConfig(OgaConfig* config);

OgaResult* OgaCreateModelFromConfig(const OgaConfig* config, OgaModel** out);
OgaResult* OgaModelGetType(const OgaModel* model, const char** out);
OgaResult* OgaModelGetDeviceType(const OgaModel* model, const char** out);
void OgaDestroyModel(OgaModel* model);

OgaResult* OgaCreateGeneratorParams(const OgaModel* model, OgaGeneratorParams** out);
OgaResult* OgaGeneratorParamsSetSearchNumber(OgaGeneratorParams* params, const char* name, double value);
OgaResult* OgaGeneratorParamsSetSearchBool(OgaGeneratorParams* params, const char* name, bool value);
void OgaDestroyGeneratorParams(OgaGeneratorParams* params);

OgaResult* OgaCreateGenerator(const OgaModel* model, const OgaGeneratorParams* params, OgaGenerator** out);
void OgaDestroyGenerator(OgaGenerator* generator);
OgaResult* OgaGenerator_AppendTokens(OgaGenerator* generator, const int32_t* tokens, size_t count);
OgaResult* OgaGenerator_GenerateNextToken(OgaGenerator* generator);
OgaResult* OgaGenerator_GetNextTokens(const OgaGenerator* generator, const int32_t** out, size_t* count);
OgaResult* OgaGenerator_GetOutput(const OgaGenerator* generator, const char* name, OgaTensor** out);
bool OgaGenerator_IsDone(const OgaGenerator* generator);

OgaResult* OgaCreateSequences(OgaSequences** out);
void OgaDestroySequences(OgaSequences* sequences);
size_t OgaSequencesGetSequenceCount(const OgaSequences* sequences, size_t index);
const int32_t* OgaSequencesGetSequenceData(const OgaSequences* sequences, size_t index);

OgaResult* OgaCreateTokenizer(const OgaModel* model, OgaTokenizer** out);
void OgaDestroyTokenizer(OgaTokenizer* tokenizer);
OgaResult* OgaTokenizerEncode(const OgaTokenizer* tokenizer, const char* text, OgaSequences* sequences);
OgaResult* OgaTokenizerDecode(const OgaTokenizer* tokenizer, const int32_t* tokens, size_t count, const char** out);

void OgaDestroyTensor(OgaTensor* tensor);
OgaResult* OgaTensorGetType(OgaTensor* tensor, OgaElementType* out);
OgaResult* OgaTensorGetShapeRank(OgaTensor* tensor, size_t* out);
OgaResult* OgaTensorGetShape(OgaTensor* tensor, int64_t* dims, size_t rank);
OgaResult* OgaTensorGetData(OgaTensor* tensor, void** out);

}  // extern "C"
