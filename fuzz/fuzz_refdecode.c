/* libFuzzer target: the differential check (tests/refdiff.h). For the same bytes the request
 * path's scanner and the jansson reference decoder must agree on valid/invalid JSON and, when
 * valid, give the identical view and identical response bytes (rules and encoder run on both),
 * up to the documented exceptions the comparator names. Any other outcome aborts. Bit 1 of the
 * size picks the target rows: the built-in ones, or refdiff_test_policy()'s (CRD rows with
 * nested lists, a managedBy at metadata.name or at "kind", rows replacing built-in ones). */
#include "jobguard/policy.h"
#include "refdiff.h"

#include <stdint.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    if (size & 1) cfg.parity = JG_PARITY_1_36; /* both wordings, as fuzz_admit */
    if (size & 2) {
        jg_config_modes_unset(&cfg);
        jg_policy_apply(refdiff_test_policy(), &cfg);
    }
    struct refdiff d;
    refdiff_run((const char *)data, size, &cfg, &d);
    if (d.kind == RD_DIFFER) fprintf(stderr, "fuzz_refdecode: %s\n", d.detail);
    CHECK(d.kind != RD_DIFFER);
    return 0;
}
