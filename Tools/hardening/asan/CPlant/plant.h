// A planted bug for corrupt-media's --plant-ub self-test: undefined behaviour in a static inline C
// function of an imported header, the same way the CFFmpeg shim's helpers are compiled, so the
// test proves UndefinedBehaviorSanitizer instruments (and stops on) such code in this build.
// Only Tools/hardening/asan/CorruptMedia imports it; no product code does.
#ifndef HLSPLAY_CPLANT_H
#define HLSPLAY_CPLANT_H
static inline int hls_plant_shift(int bits) { return 1 << bits; } /* UB for bits >= 32 */
#endif
