// What the Swift targets call back into libFuzzer: its own mutator, for the custom
// mutator's fallback (https://llvm.org/docs/LibFuzzer.html#fuzzer-friendly-build-mode).
#ifndef HLSPLAY_CLIBFUZZER_H
#define HLSPLAY_CLIBFUZZER_H
#include <stddef.h>
#include <stdint.h>
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);
#endif
