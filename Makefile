# seqgrad - build, test and benchmark.
#
#   make              the library (build/libseqgrad.a), every example (build/examples/NN_name)
#                     and the command-line tool (build/seqgrad)
#   make test         build and run the test suite; ends with "tests: N passed, M failed"
#   make test-kernels the suite again under each other gemm kernel the CPU runs (SEQGRAD_KERNEL)
#   make sanitize     the float32 suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   make tsan         the thread pool, parallel kernels and training runs under ThreadSanitizer
#   make faults       fault injection on the seqgrad tool: full disks, devices, signals, broken files
#   make fuzz         libFuzzer on the safetensors reader, the TSV reader and the command line
#                     (clang; FUZZ_SECONDS=20 each, two at a time)
#   make fuzz-ops     the random-expression property test, N=20000 cases in each precision
#   make soak         the memory soak test, EPOCHS=20 and 10x that
#   make bench        benchmark programs (build/bench_*)
#   make check-docs   check that the code and output quoted in docs/ match the sources, that the
#                     Chinese chapters match the English ones, and that every figure is there and
#                     is what the code draws now (about a minute: docs/figures/make_figures.sh --check)
#   make figures      draw the book's figures again into docs/figures/ (about a minute)
#   make browser-test the attention explorer in headless Chromium (installed if root; else skipped)
#   make quick-claims every example's --quick run shows what the book claims (tests/examples/quick/)
#   make exercises-verify  every coursework check fails on its stub and passes with its solution
#   make demo         train a small Transformer translator (about a minute) and show what it does
#   make clean
#
# Options: PORTABLE=1 drops -march=native; DOCTEST_INCLUDE=DIR names the folder holding
# doctest/doctest.h; CXX=clang++ picks another compiler. Parallel-safe: make runs -j by default.

CXX ?= g++
BUILD ?= build
DOCTEST_INCLUDE ?= /usr/include

MAKEFLAGS += --no-builtin-rules
ifeq ($(MAKELEVEL),0)
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif
endif

ARCH_FLAGS := $(if $(PORTABLE),,-march=native)
OPT_FLAGS ?= -O3
WARN_FLAGS := -Wall -Wextra -Werror
# -fno-math-errno: math functions need not set errno (nothing here reads it), so std::sqrt is
# one instruction and loops that use it run on vectors. It changes no result; unlike
# -ffast-math, which this project never uses, it lets the compiler reorder no arithmetic.
MATH_FLAGS := -fno-math-errno
CXXFLAGS_ALL = -std=c++17 $(OPT_FLAGS) $(ARCH_FLAGS) $(MATH_FLAGS) $(WARN_FLAGS) $(EXTRA_FLAGS) -pthread -I. -MMD -MP
LDFLAGS_ALL = -pthread $(EXTRA_FLAGS)

# ------------------------------------------------------------------------------------------------
# Sources: every .cpp in the library folders is part of libseqgrad.a.
# nn/ is in folders that follow the book (nn/README.md): core, optim, recurrent, attention, ...
LIB_SRCS := $(sort $(wildcard tensor/*.cpp io/*.cpp autograd/*.cpp nn/*/*.cpp data/*.cpp viz/*.cpp))
LIB_OBJS := $(LIB_SRCS:%.cpp=$(BUILD)/obj/%.o)
LIB := $(BUILD)/libseqgrad.a

# The same library in double precision, for the gradient-check tests (see tensor/dtype.h).
LIB64_OBJS := $(LIB_SRCS:%.cpp=$(BUILD)/obj64/%.o)
LIB64 := $(BUILD)/libseqgrad64.a

EXAMPLE_DIRS := $(filter-out examples/seqgrad/,$(sort $(dir $(wildcard examples/*/main.cpp))))
EXAMPLES := $(patsubst examples/%/,$(BUILD)/examples/%,$(EXAMPLE_DIRS))
# What the examples and the tool share (examples/common/*.cpp: the flag parser).
COMMON_SRCS := $(sort $(wildcard examples/common/*.cpp))
COMMON_OBJS := $(COMMON_SRCS:%.cpp=$(BUILD)/obj/%.o)

# The seqgrad command-line tool: examples/seqgrad/*.cpp. Everything but main.cpp is also linked
# into the test binary, so tests can run the tool's commands in-process.
CLI_SRCS := $(filter-out examples/seqgrad/main.cpp,$(sort $(wildcard examples/seqgrad/*.cpp))) $(COMMON_SRCS)
CLI_OBJS := $(CLI_SRCS:%.cpp=$(BUILD)/obj/%.o)
CLI ?= $(BUILD)/seqgrad
# EXTRA: files of your own linked into the tool and the test binaries (a new score, cell or model
# kind that registers itself, nn/core/registry.h): make seqgrad EXTRA="my_score.cpp my_cell.cpp",
# or make test EXTRA="..." to run every generic check on them too. Make remembers them beside the
# tool ($(CLI).extra) and says so: a later `make` or `make test` builds them in again, until
# `make EXTRA=` (empty) leaves them out.
ifeq ($(origin EXTRA),undefined)
EXTRA := $(shell cat $(CLI).extra 2>/dev/null)
ifneq ($(strip $(EXTRA)),)
$(info note: building in the EXTRA files remembered in $(CLI).extra: $(EXTRA) (make EXTRA= leaves them out))
endif
endif
EXTRA_OBJS := $(patsubst %.cpp,$(BUILD)/obj/extra/%.o,$(abspath $(EXTRA)))
EXTRA64_OBJS := $(patsubst %.cpp,$(BUILD)/obj64/extra/%.o,$(abspath $(EXTRA)))
$(BUILD)/obj/extra/%.o: /%.cpp
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS_ALL) -c $< -o $@
$(BUILD)/obj64/extra/%.o: /%.cpp
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS_ALL) -DSEQGRAD_DOUBLE -c $< -o $@

# Tests mirror the top-level folders (tests/nn/ holds those of every nn/ folder).
# tests/autograd/test_grad_*.cpp are the gradient checks: they
# run twice, once against each precision.
TEST_MAIN := tests/main.cpp
TEST_SRCS := $(sort $(wildcard tests/*/test_*.cpp))
GRAD_TEST_SRCS := $(sort $(wildcard tests/*/test_grad_*.cpp))
TEST_OBJS := $(TEST_SRCS:%.cpp=$(BUILD)/obj/%.o) $(BUILD)/obj/tests/main.o
GRAD64_OBJS := $(GRAD_TEST_SRCS:%.cpp=$(BUILD)/obj64/%.o) $(BUILD)/obj64/tests/main.o
TEST_BIN := $(BUILD)/test_seqgrad
TEST64_BIN := $(BUILD)/test_grad64

BENCH_SRCS := $(sort $(wildcard bench/*.cpp))
BENCHES := $(BENCH_SRCS:bench/%.cpp=$(BUILD)/%)

DOCTEST_HEADER := $(DOCTEST_INCLUDE)/doctest/doctest.h

# Keep object files that are only steps to a program (make would delete them otherwise).
.SECONDARY:

.PHONY: all lib examples test test-kernels run-tests run-tests32 sanitize tsan faults fuzz fuzzers fuzz-ops soak bench demo check-docs figures browser-test quick-claims exercises-verify clean
all: lib examples $(CLI)
lib: $(LIB)
examples: $(EXAMPLES)

# ------------------------------------------------------------------------------------------------
# Compilation
$(BUILD)/obj/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS_ALL) -c $< -o $@

$(BUILD)/obj64/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS_ALL) -DSEQGRAD_DOUBLE -c $< -o $@

# The blocked gemm and vmath's exp, sigmoid and tanh are compiled once per instruction set
# (tensor/kernel_path.h; tensor/gemm.cpp picks one at run time): the *_avx2 and *_avx512 copies
# get their instruction sets whatever ARCH_FLAGS says, so that a PORTABLE=1 build still has
# them. Only on x86; elsewhere those files are empty. (The short loops handed to for_isa,
# tensor/isa_loop.h, get theirs from function attributes instead.) The generic copies, built
# without AVX in PORTABLE=1, pass 256-bit vectors between inlined helpers of their own, which
# makes GCC note an ABI change of GCC 4.6 that the helpers never cross; -Wno-psabi keeps that
# note out of the build's output (the source's own pragma does not reach it).
ifneq ($(filter x86_64% i386% i486% i586% i686%,$(shell $(CXX) -dumpmachine 2>/dev/null)),)
ISA_AVX2_FLAGS := -mavx2 -mfma
ISA_AVX512_FLAGS := -mavx2 -mfma -mavx512f -mavx512vl -mavx512bw -mavx512dq
ISA_AVX512_BF16_FLAGS := $(ISA_AVX512_FLAGS) -mavx512bf16
endif
ISA_COPIES := gemm vmath
$(foreach c,$(ISA_COPIES),$(BUILD)/obj/tensor/$(c)_avx2.o $(BUILD)/obj64/tensor/$(c)_avx2.o): private CXXFLAGS_ALL += $(ISA_AVX2_FLAGS)
$(foreach c,$(ISA_COPIES),$(BUILD)/obj/tensor/$(c)_avx512.o $(BUILD)/obj64/tensor/$(c)_avx512.o): private CXXFLAGS_ALL += $(ISA_AVX512_FLAGS)
$(foreach c,$(ISA_COPIES),$(BUILD)/obj/tensor/$(c)_generic.o $(BUILD)/obj64/tensor/$(c)_generic.o): private CXXFLAGS_ALL += -Wno-psabi
# The bfloat16 product on vdpbf16ps (tensor/gemm_avx512_bf16.cpp): one copy, for AVX512_BF16.
$(BUILD)/obj/tensor/gemm_avx512_bf16.o $(BUILD)/obj64/tensor/gemm_avx512_bf16.o: private CXXFLAGS_ALL += $(ISA_AVX512_BF16_FLAGS)

# Test objects need doctest: find it, or install it, or explain how (tests/ensure_doctest.sh).
# (/usr/include is searched already; naming it with -isystem would break <cmath>.)
TEST_INCLUDE_FLAGS = $(if $(filter /usr/include,$(DOCTEST_INCLUDE)),,-isystem $(DOCTEST_INCLUDE))

# Build time. Tests spend their time inside the library, which keeps OPT_FLAGS; the test files
# themselves are mostly assertions, compiled unoptimised (TEST_OPT_FLAGS; the last -O given
# wins) with doctest's lighter assertion code (an exception inside a CHECK fails its test case
# instead of only that check): at -O0 they compile in half the time they take at -O1 and the
# suite runs a few seconds longer. The float64 library serves the gradchecks alone, at small
# sizes: -O1 (at -O0 it compiles no faster and the gradchecks run five times as long).
# A test's reference arithmetic is computed as written: no compiler fuses its a * b + c into one
# rounding (-ffp-contract=off; clang would by default, and a reference must not round
# differently from the op it checks).
TEST_OPT_FLAGS ?= -O0
LIB64_OPT_FLAGS ?= -O1
TEST_FLAGS = $(TEST_INCLUDE_FLAGS) $(TEST_OPT_FLAGS) -ffp-contract=off -DDOCTEST_CONFIG_SUPER_FAST_ASSERTS
$(BUILD)/obj/tests/%.o $(BUILD)/obj64/tests/%.o: private CXXFLAGS_ALL += $(TEST_FLAGS)
$(BUILD)/obj64/%.o: private CXXFLAGS_ALL += $(LIB64_OPT_FLAGS)
$(TEST_OBJS) $(GRAD64_OBJS): | $(BUILD)/.doctest-ok

# Every test file includes tests/test_util.h, which includes seqgrad.h and doctest: parsing them
# is two thirds of a test file's compile time. So they are parsed once per build, into a
# precompiled header (GCC's .gch, which clang reads too), and each test file starts from it
# (-include: the compiler takes NAME.gch when it sits beside NAME and was built with the same
# flags, and parses NAME otherwise). The header NAME is one line written into the build folder,
# so tests/test_util.h keeps its own path and its #pragma once holds. (The objects' flags are
# `private`: make would otherwise pass a target's variables on to what it builds first for it,
# and the header would be compiled with -include of its own out-of-date .gch.)
$(BUILD)/pch/test_util_pch.h $(BUILD)/pch64/test_util_pch.h:
	@mkdir -p $(@D) && echo '#include "tests/test_util.h"' > $@
$(BUILD)/pch/test_util_pch.h.gch $(BUILD)/pch64/test_util_pch.h.gch: %.gch: % | $(BUILD)/.doctest-ok
	$(CXX) $(CXXFLAGS_ALL) -x c++-header $< -o $@
$(BUILD)/pch/%.gch $(BUILD)/pch64/%.gch: CXXFLAGS_ALL += $(TEST_FLAGS)
$(BUILD)/pch64/%.gch: CXXFLAGS_ALL += -DSEQGRAD_DOUBLE
$(TEST_SRCS:%.cpp=$(BUILD)/obj/%.o): $(BUILD)/pch/test_util_pch.h.gch
$(TEST_SRCS:%.cpp=$(BUILD)/obj/%.o): private CXXFLAGS_ALL += -include $(BUILD)/pch/test_util_pch.h
$(GRAD_TEST_SRCS:%.cpp=$(BUILD)/obj64/%.o): $(BUILD)/pch64/test_util_pch.h.gch
$(GRAD_TEST_SRCS:%.cpp=$(BUILD)/obj64/%.o): private CXXFLAGS_ALL += -include $(BUILD)/pch64/test_util_pch.h
$(BUILD)/.doctest-ok:
	@sh tests/ensure_doctest.sh "$(DOCTEST_INCLUDE)"
	@mkdir -p $(@D) && touch $@

$(LIB): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(LIB64): $(LIB64_OBJS)
	@rm -f $@
	ar rcs $@ $^

# Programs link the library whole: its scores, cells and model kinds register themselves by name
# (nn/core/registry.h), and a linker takes from an archive only the objects something names.
whole = -Wl,--whole-archive $(1) -Wl,--no-whole-archive

$(BUILD)/examples/%: $(BUILD)/obj/examples/%/main.o $(COMMON_OBJS) $(LIB)
	@mkdir -p $(@D)
	$(CXX) $(filter-out $(LIB),$^) $(call whole,$(LIB)) $(LDFLAGS_ALL) -o $@

.PHONY: seqgrad FORCE
seqgrad: $(CLI)
# (The file changes only when EXTRA does, and then the tool and the tests are linked again.)
$(CLI).extra: FORCE
	@mkdir -p $(@D) && (echo '$(abspath $(EXTRA))' | cmp -s - $@ || echo '$(abspath $(EXTRA))' > $@)
$(CLI): $(BUILD)/obj/examples/seqgrad/main.o $(CLI_OBJS) $(EXTRA_OBJS) $(LIB) $(CLI).extra
	@mkdir -p $(@D)
	$(CXX) $(filter-out $(LIB) $(CLI).extra,$^) $(call whole,$(LIB)) $(LDFLAGS_ALL) -o $@

$(TEST_BIN): $(TEST_OBJS) $(CLI_OBJS) $(EXTRA_OBJS) $(LIB) $(CLI).extra
	$(CXX) $(TEST_OBJS) $(CLI_OBJS) $(EXTRA_OBJS) $(call whole,$(LIB)) $(LDFLAGS_ALL) -o $@

$(TEST64_BIN): $(GRAD64_OBJS) $(EXTRA64_OBJS) $(LIB64) $(CLI).extra
	$(CXX) $(GRAD64_OBJS) $(EXTRA64_OBJS) $(call whole,$(LIB64)) $(LDFLAGS_ALL) -o $@

$(BUILD)/bench_%: $(BUILD)/obj/bench/bench_%.o $(LIB)
	$(CXX) $< $(call whole,$(LIB)) $(LDFLAGS_ALL) -o $@

# ------------------------------------------------------------------------------------------------
# Running
# The float32 suite runs as two shards side by side (tests/run_tests.sh): the tool's tests in
# tests/examples/, which train models, with the attention decoders' gradchecks, and all the
# others (a split that takes about as long on each side, optimised and instrumented). Every
# test case runs in exactly one.
SHARD_FILES := *tests/examples/*,*tests/nn/test_grad_attention_seq2seq*
TEST_SHARDS = "$(TEST_BIN) -sf=$(SHARD_FILES) $(TEST_ARGS)" "$(TEST_BIN) -sfe=$(SHARD_FILES) $(TEST_ARGS)"
# The objects built with wider instruction-set flags must define nothing but their own gemm
# (tests/check_kernel_symbols.sh says why).
KERNEL_OBJS = $(foreach c,$(ISA_COPIES),$(BUILD)/obj/tensor/$(c)_avx2.o $(BUILD)/obj/tensor/$(c)_avx512.o) $(BUILD)/obj/tensor/gemm_avx512_bf16.o
KERNEL_OBJS64 = $(foreach c,$(ISA_COPIES),$(BUILD)/obj64/tensor/$(c)_avx2.o $(BUILD)/obj64/tensor/$(c)_avx512.o) $(BUILD)/obj64/tensor/gemm_avx512_bf16.o
# The objects whose loops go through for_isa (tensor/isa_loop.h) must hold real AVX code in
# their avx2 and avx512 copies (tests/check_isa_copies.sh says why). The optimised float32
# objects only: the float64 library for the gradchecks is built at -O1, which vectorises nothing.
ISA_LOOP_OBJS = $(foreach o,tensor/softmax tensor/fused tensor/reduce autograd/ops_math,$(BUILD)/obj/$(o).o)
test: all $(TEST_BIN) $(TEST64_BIN)
	@sh tests/check_kernel_symbols.sh $(KERNEL_OBJS) $(KERNEL_OBJS64)
	@sh tests/check_isa_copies.sh $(ISA_LOOP_OBJS)
	@sh tests/run_tests.sh $(TEST_SHARDS) $(TEST64_BIN)
	@sh tests/examples/coursework.sh $(BUILD)
	@sh tests/examples/to_pytorch.sh $(BUILD)

# Every test once more under each other gemm kernel this CPU runs (SEQGRAD_KERNEL=generic,
# avx2; tests/cpu_kernels.sh lists them): `make test` runs the widest, and the kernel tests
# switch paths themselves, but every path must pass everything, fixtures and thread-count
# determinism included.
test-kernels: $(TEST_BIN) $(TEST64_BIN)
	@for k in $$(sh tests/cpu_kernels.sh | sed '$$d'); do \
	  echo "== SEQGRAD_KERNEL=$$k"; SEQGRAD_KERNEL=$$k sh tests/run_tests.sh $(TEST_SHARDS) $(TEST64_BIN) || exit 1; \
	done

# The float32 suite, instrumented; its own build folder so the optimised build is untouched. Line
# tables (-g1) are all a sanitizer's report needs, and build much faster than full -g. Clang
# builds it (found or installed by tests/fuzz/ensure_clang.sh, as for the fuzzers): with both
# sanitizers it compiles in half the time GCC takes; the library at -O1. (Clang's
# -Woverloaded-virtual is off: modules whose forward takes two inputs, such as forward(query,
# keys), hide Module's one-input forward on purpose.) The float64 gradchecks compile the same
# sources with another `real`; building a second instrumented library for them would add a
# third to the time, so they run in `make test` only (`make sanitize RUN_TESTS=run-tests`
# includes them).
# Five long training runs are left out here: seconds optimised, minutes instrumented, through
# layers whose shape tests, gradchecks and short training runs are instrumented all the same
# (every model kind's greedy and beam decoding, for one, in "batched decoding equals one
# sentence at a time").
RUN_TESTS ?= run-tests32
SANITIZE_SKIP := -tce=it?learns:?example?14*,example?13:?a?3-layer*,it?learns:?a?3-layer?GNMT*,seqgrad?eval?--beam?4:?every*,it?learns:?Luong*
SANITIZE_CXX ?= clang++
# (The settings live in a variable, but each recipe names $(MAKE) itself: only then does make
# share its parallel jobs with the sub-make.)
SANITIZE_VARS = --no-print-directory BUILD=build/sanitize CXX="$(SANITIZE_CXX)" OPT_FLAGS="-O1 -g1" \
  WARN_FLAGS="$(WARN_FLAGS) -Wno-overloaded-virtual" \
  EXTRA_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
sanitize:
	@sh tests/fuzz/ensure_clang.sh "$(SANITIZE_CXX)"
	@$(MAKE) $(SANITIZE_VARS) TEST_ARGS="$(SANITIZE_SKIP)" $(RUN_TESTS)

# The test binaries only (no examples): what the instrumented builds need.
run-tests: $(TEST_BIN) $(TEST64_BIN)
	@sh tests/check_kernel_symbols.sh $(KERNEL_OBJS) $(KERNEL_OBJS64)
	@sh tests/run_tests.sh $(TEST_SHARDS) $(TEST64_BIN)
run-tests32: $(TEST_BIN)
	@sh tests/check_kernel_symbols.sh $(KERNEL_OBJS)
	@sh tests/run_tests.sh $(TEST_SHARDS)

# The thread pool, the parallel kernels, data-parallel shards and short training runs under ThreadSanitizer. Only the
# test files that hold these cases are built into build/tsan/test_tsan, to keep the build short;
# they run as two shards side by side, the matmul tests and the others.
TSAN_TESTS := parallel_for*,set_num_threads*,gemm*,matmul*,*bit-identical*,*thread?counts*,it?learns:?seq2seq*,GradientShard*,data_parallel_backward*,seqgrad?train?--replicas*
TSAN_TEST_SRCS := tests/tensor/test_thread_pool.cpp tests/tensor/test_matmul.cpp tests/tensor/test_reduce.cpp \
                  tests/nn/test_seq2seq.cpp tests/nn/test_data_parallel.cpp tests/examples/test_cli_reliability.cpp
tsan:
	@$(MAKE) --no-print-directory BUILD=build/tsan OPT_FLAGS="-O1 -g1" EXTRA_FLAGS="-fsanitize=thread" build/tsan/test_tsan
	@TSAN_OPTIONS=halt_on_error=1 sh tests/run_tests.sh "build/tsan/test_tsan -tc=$(TSAN_TESTS) -sf=*test_matmul*" \
	  "build/tsan/test_tsan -tc=$(TSAN_TESTS) -sfe=*test_matmul*"

$(BUILD)/test_tsan: $(TSAN_TEST_SRCS:%.cpp=$(BUILD)/obj/%.o) $(BUILD)/obj/tests/main.o $(CLI_OBJS) $(LIB)
	$(CXX) $(filter-out $(LIB),$^) $(call whole,$(LIB)) $(LDFLAGS_ALL) -o $@
$(TSAN_TEST_SRCS:%.cpp=$(BUILD)/obj/%.o): | $(BUILD)/.doctest-ok

# libFuzzer targets (tests/fuzz/fuzz_NAME.cpp), built by clang with AddressSanitizer +
# UndefinedBehaviorSanitizer in build/fuzz/. Each runs FUZZ_SECONDS seconds from its committed
# seeds (tests/fuzz/corpus/NAME); see tests/fuzz/run_fuzzers.sh. Clang and its runtimes are
# found, or installed, or asked for by tests/fuzz/ensure_clang.sh.
# libFuzzer is guided by the branches it reaches in code compiled with coverage
# (-fsanitize=fuzzer-no-link): the readers in io/ and data/, the checkpoint loader and the tool
# (FUZZ_COVERED_SRCS, and the tool's objects). Everything else is linked from the instrumented
# library of `make sanitize` (build/sanitize, built first if missing), so the library is not
# compiled twice with the same sanitizers; both builds must use clang.
FUZZ_CXX ?= clang++
FUZZ_SECONDS ?= 20
FUZZERS = $(patsubst tests/fuzz/%.cpp,$(BUILD)/%,$(wildcard tests/fuzz/fuzz_*.cpp))
FUZZ_COVERED_SRCS := $(sort $(wildcard io/*.cpp data/*.cpp)) nn/core/checkpoint.cpp
fuzz:
	@sh tests/fuzz/ensure_clang.sh "$(FUZZ_CXX)"
	@$(MAKE) $(SANITIZE_VARS) build/sanitize/libseqgrad.a
	@$(MAKE) --no-print-directory BUILD=build/fuzz CXX="$(FUZZ_CXX)" OPT_FLAGS="-O1 -g1" WARN_FLAGS=-w \
	  EXTRA_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" fuzzers
	@sh tests/fuzz/run_fuzzers.sh $(FUZZ_SECONDS) $(patsubst tests/fuzz/%.cpp,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.cpp))

# The covered objects are linked, and every other object of the instrumented library, each
# once (the whole library, as every program links it: see `whole` above).
fuzzers: $(FUZZERS)
FUZZ_UNCOVERED_OBJS = $(patsubst %.cpp,build/sanitize/obj/%.o,$(filter-out $(FUZZ_COVERED_SRCS),$(LIB_SRCS)))
$(BUILD)/fuzz_%: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(CLI_OBJS) $(FUZZ_COVERED_SRCS:%.cpp=$(BUILD)/obj/%.o) \
                 build/sanitize/libseqgrad.a
	$(CXX) $(filter-out build/sanitize/libseqgrad.a,$^) $(FUZZ_UNCOVERED_OBJS) $(LDFLAGS_ALL) -fsanitize=fuzzer -o $@

# The long versions of two tests in `make test`: many more random expressions (N cases, in
# float32 and float64), and a longer memory soak (EPOCHS and 10 x EPOCHS epochs).
N ?= 20000
fuzz-ops: $(TEST_BIN) $(TEST64_BIN)
	@SEQGRAD_FUZZ_OPS=$(N) sh tests/run_tests.sh "$(TEST_BIN) -tc=random?expressions*" "$(TEST64_BIN) -tc=random?expressions*"

EPOCHS ?= 20
soak: $(TEST_BIN)
	@SEQGRAD_SOAK_EPOCHS=$(EPOCHS) sh tests/run_tests.sh "$(TEST_BIN) -tc=soak*"

# Fault injection on the tool (tests/faults/run_faults.sh): full disks, device nodes and FIFOs as
# outputs, limits, signals, and checkpoints broken on purpose by build/fault_edit.
FAULT_EDIT := $(BUILD)/fault_edit
$(FAULT_EDIT): $(BUILD)/obj/tests/faults/fault_edit.o $(LIB)
	$(CXX) $< $(call whole,$(LIB)) $(LDFLAGS_ALL) -o $@
faults: $(CLI) $(FAULT_EDIT) examples
	@bash tests/faults/run_faults.sh $(BUILD)

bench: $(BENCHES)

# Code and program output shown in docs/ must equal the sources and real runs (docs/check_docs.sh),
# and so must the figures: drawn from the code's objects and from short seeded runs
# (docs/figures/make_figures.sh; `make figures` draws them again, to look at and commit).
check-docs: examples $(CLI)
	@sh docs/check_docs.sh

figures: examples $(CLI)
	@sh docs/figures/make_figures.sh $(BUILD)

# The attention explorer (seqgrad attention --html) opened in a real browser: Debian's Chromium,
# headless, installed by the test when run as root, skipped with a message where it cannot be.
browser-test: $(CLI)
	@sh tests/examples/explorer_browser.sh $(BUILD)

# What the book says an example's --quick run shows, it must show: each script in
# tests/examples/quick/ runs one example's --quick variants and checks the difference with a
# margin (tests/examples/claims.sh). Every script there runs, one after another; each names its
# failures and the target fails if any did.
quick-claims: examples
	@failed=0; for s in tests/examples/quick/*.sh; do sh "$$s" $(BUILD) || failed=1; done; [ $$failed -eq 0 ]

# The coursework (exercises/, docs/13-exercises.md) proves itself: each check must fail on the
# untouched stub and pass with the reference solution in exercises/solutions/.
exercises-verify: lib
	@$(MAKE) --no-print-directory -C exercises verify

# The front door: a small Transformer learns toy English -> Chinese in about a minute, then
# translates sentences it has never seen and draws what it attends to.
DEMO := $(BUILD)/demo
demo: all
	@mkdir -p $(DEMO)
	@echo "== 6,000 training pairs and 300 held-out test pairs (none of them seen in training)"
	$(CLI) data --task en-zh --n 6000 --seed 1 > $(DEMO)/train.tsv
	$(CLI) data --task en-zh --n 300 --seed 2 --exclude $(DEMO)/train.tsv > $(DEMO)/test.tsv
	@head -n 3 $(DEMO)/train.tsv
	@echo "== training a Transformer for about a minute"
	$(CLI) train --train $(DEMO)/train.tsv --arch transformer --epochs 50 --minutes 1 --out $(DEMO)/en-zh.safetensors
	@echo "== translating the held-out sentences"
	$(CLI) eval --model $(DEMO)/en-zh.safetensors --data $(DEMO)/test.tsv --show 8
	@echo "== what the model looks at"
	$(CLI) attention --model $(DEMO)/en-zh.safetensors --svg $(DEMO)/attention.svg lily will read three red books tomorrow
	@echo "Open $(DEMO)/attention.svg in a browser to see the heatmap; $(DEMO)/en-zh.training.svg has the training curves."

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
