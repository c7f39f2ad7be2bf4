# gpuplan - one flat Makefile, out-of-tree build in $(BUILD)/.
#
#   make            build build/gpuplan
#   make run        install missing packages, build, run a real planning query
#   make test       install missing packages, build, run every test
#   make help       list every target
#
# Knobs: DEVELOPER=1 (-Werror), CUDA=auto|yes|no, CUDA_HOME, BUILD, PREFIX,
# DESTDIR, SAN=1 (AddressSanitizer + UBSan; used by `make asan`).

SHELL    := /bin/bash
BUILD    ?= build
PREFIX   ?= /usr/local
CUDA     ?= auto
CUDA_HOME ?= /usr/local/cuda
CC       ?= cc
NVCC     ?= $(CUDA_HOME)/bin/nvcc

MODULES  := common pricing simulator planner export executor
INCLUDES := $(addprefix -I,$(MODULES))
# The C files include the project's headers in quotes: -iquote keeps
# simulator/sched.h from hiding the system's <sched.h> (which OpenBLAS's
# cblas.h includes).
C_INCLUDES := $(addprefix -iquote ,$(MODULES))
# The executor's layers, each a folder, bottom up (docs in executor/exec.h;
# tests/layers/test_layers.sh checks that none reaches up).  Its files
# include each other by path from executor/ ("comm/exec_comm.h").
EXEC_DIRS := executor/device executor/device/cpu executor/device/cuda executor/comm \
             executor/train executor/run

WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(WARN) -MMD -MP $(C_INCLUDES)
ifeq ($(DEVELOPER),1)
CFLAGS   += -Werror
endif
ifeq ($(SAN),1)
# float-cast-overflow is not part of GCC's undefined: a double out of an
# int's range cast to int is undefined behaviour all the same.
CFLAGS   += -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
	    -fno-sanitize-recover=undefined,float-cast-overflow
LDFLAGS  += -fsanitize=address,undefined,float-cast-overflow
endif

# ---- third-party libraries: pkg-config where a .pc ships, plain -l otherwise
PKG_CJSON   := $(shell pkg-config --exists libcjson 2>/dev/null && echo yes)
CJSON_CFLAGS := $(if $(PKG_CJSON),$(shell pkg-config --cflags libcjson))
CJSON_LIBS  := $(if $(PKG_CJSON),$(shell pkg-config --libs libcjson),-lcjson)
MPI_CFLAGS  := $(shell pkg-config --cflags ompi-c 2>/dev/null)
MPI_LIBS    := $(shell pkg-config --libs ompi-c 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
# libcurl (OpenSSL flavour) for `prices fetch`; only pricing/price_fetch.c includes it
CURL_CFLAGS := $(shell pkg-config --cflags libcurl 2>/dev/null)
CURL_LIBS   := $(shell pkg-config --libs libcurl 2>/dev/null || echo -lcurl)
# OpenBLAS: the CPU backend's GEMMs (executor/device/cpu/exec_cpu_matmul.c)
BLAS_CFLAGS := $(shell pkg-config --cflags openblas 2>/dev/null)
BLAS_LIBS   := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
LIBS        := -lglpk -lcsv $(CJSON_LIBS) $(CURL_LIBS) $(MPI_LIBS) $(BLAS_LIBS) -lm -pthread

# ---- CUDA: built wherever nvcc is found (CUDA=auto), required with CUDA=yes
ifeq ($(CUDA),no)
HAVE_CUDA :=
else
HAVE_CUDA := $(shell test -x $(NVCC) && echo yes)
endif
ifeq ($(CUDA),yes)
ifneq ($(HAVE_CUDA),yes)
$(error CUDA=yes but nvcc was not found at $(NVCC); set CUDA_HOME)
endif
endif
CU_SRC   := $(if $(HAVE_CUDA),$(wildcard executor/device/cuda/*.cu))
NVFLAGS  := -O2 -g -std=c++17 $(INCLUDES) $(MPI_CFLAGS) -DGPUPLAN_CUDA \
            -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
            -gencode arch=compute_90,code=compute_90 \
            -Xcompiler -Wall
ifneq ($(HAVE_CUDA),)
CFLAGS_EXEC := -DGPUPLAN_CUDA -isystem $(CUDA_HOME)/include
LIBS     += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcublasLt -lnccl -lcudart -lstdc++
endif

# ---- sources
LIB_SRC  := $(foreach m,$(MODULES) $(EXEC_DIRS),$(wildcard $(m)/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(CU_SRC:%.cu=$(BUILD)/%.cu.o)
CLI_SRC  := $(wildcard cli/*.c)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
LIB      := $(BUILD)/libgpuplan.a
BIN      := $(BUILD)/gpuplan

.PHONY: all test bench asan valgrind cuda deps run install clean help fuzz check-exports
.DEFAULT_GOAL := all

all: $(BIN)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CJSON_CFLAGS) -c $< -o $@

$(BUILD)/pricing/price_fetch.o: pricing/price_fetch.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CURL_CFLAGS) -c $< -o $@

$(BUILD)/executor/%.o: executor/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CJSON_CFLAGS) $(MPI_CFLAGS) $(BLAS_CFLAGS) $(CFLAGS_EXEC) -c $< -o $@

$(BUILD)/executor/%.cu.o: executor/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -MMD -MP -MF $(@:.o=.d) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LIBS)

$(BUILD)/tests/%: tests/%.c $(LIB) tests/testutil.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CJSON_CFLAGS) $(MPI_CFLAGS) -Itests $(LDFLAGS) -o $@ $< $(LIB) $(CMOCKA_LIBS) $(LIBS)

# The CUDA backend's sources built for the host against tests/cuda_emu/ (a
# CPU stand-in for the CUDA runtime and cuBLAS), so its kernels run in
# every test run, nvcc or not; small attention blocks and column chunks
# exercise the tiling.
CXX      ?= c++
EMU_SAN  := -fsanitize=address,undefined
EMU_FLAGS := -std=c++17 -O1 -g -DGPUPLAN_CUDA_EMU -DATTN_SCRATCH_FLOATS=2048 -DATTN_MIN_ROWS=8 -DCOL_CHUNK=5 \
             -Itests/cuda_emu $(INCLUDES) -Wall -Wextra -MMD -MP $(if $(filter 1,$(SAN)),$(EMU_SAN))
EMU_CU   := $(wildcard executor/device/cuda/*.cu)
EMU_OBJ  := $(EMU_CU:executor/device/cuda/%.cu=$(BUILD)/tests/cuda_emu/%.o) $(BUILD)/tests/cuda_emu.o
-include $(EMU_OBJ:.o=.d)
$(BUILD)/tests/cuda_emu/%.o: executor/device/cuda/%.cu
	@mkdir -p $(dir $@)
	$(CXX) $(EMU_FLAGS) -x c++ -c $< -o $@
$(BUILD)/tests/cuda_emu.o: tests/cuda_emu/cuda_emu.cc
	@mkdir -p $(dir $@)
	$(CXX) $(EMU_FLAGS) -c $< -o $@
$(BUILD)/tests/test_exec_cuda: tests/test_exec_cuda.c $(EMU_OBJ) $(LIB) tests/testutil.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CJSON_CFLAGS) $(MPI_CFLAGS) -Itests -Itests/cuda_emu $(LDFLAGS) -o $@ $< $(EMU_OBJ) $(LIB) $(CMOCKA_LIBS) $(LIBS) -lstdc++

# the accuracy bench with its readers of bench/data (bench/accuracy/)
ACCURACY_SRC := bench/accuracy.c $(wildcard bench/accuracy/*.c)
$(BUILD)/bench/accuracy: $(ACCURACY_SRC) $(wildcard bench/accuracy/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CJSON_CFLAGS) -Ibench/accuracy $(LDFLAGS) -o $@ $(ACCURACY_SRC) $(LIB) $(LIBS)

$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CJSON_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LIBS)

# ---- set-up: install what is missing from Debian's packages, once
DEPS_PKGS := libglpk-dev libcsv-dev libcjson-dev libcurl4-openssl-dev libcmocka-dev libopenmpi-dev \
             libopenblas-dev \
             openmpi-bin gnuplot-nox pkg-config python3-yaml python3-jsonschema
deps:
	@missing=""; for p in $(DEPS_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	fi

cuda:
	@if [ -n "$(HAVE_CUDA)" ]; then echo "cuda: nvcc found at $(NVCC); building CUDA objects"; \
	else echo "cuda: nvcc not found at $(NVCC) (set CUDA_HOME); CUDA backend skipped"; fi
	@$(MAKE) --no-print-directory all

run: deps
	@$(MAKE) --no-print-directory all
	./$(BIN) plan --model llama3-70b --tokens 1T --budget 2.5M -o $(BUILD)/plan.json

test: deps
	@$(MAKE) --no-print-directory all $(TEST_BIN) $(BENCH_BIN)
	@BUILD=$(BUILD) ./tests/run_tests.sh $(TEST_BIN)

# OpenMPI keeps memory from MPI_Init to exit in plugins it may unload:
# the slow unwinder finds their library for tests/lsan.supp to match.
# One BLAS thread: no OpenBLAS pool thread starts as a command exits
# (see tests/lsan.supp).
asan: deps
	@OPENBLAS_NUM_THREADS=1 ASAN_OPTIONS=fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  $(MAKE) --no-print-directory BUILD=build-asan SAN=1 test

valgrind: deps
	@$(MAKE) --no-print-directory all
	@VALGRIND=1 BUILD=$(BUILD) ./tests/run_tests.sh --cli-only

bench: deps
	@$(MAKE) --no-print-directory all $(BENCH_BIN)
	@./bench/run_bench.sh $(BUILD)

# Every export of 20 plans through the real tools that read them, where
# this machine has them (MEGATRON_LM: a Megatron-LM checkout; python3 with
# torch, deepspeed, jsonschema; SKY_PYTHON with SkyPilot; shellcheck;
# mpirun); a missing tool is a printed skip, never a download.
check-exports: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) ./tests/check_exports.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/gpuplan $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/gpuplan
	install -m 644 data/*.csv data/SOURCES.md $(DESTDIR)$(PREFIX)/share/gpuplan/
	install -m 644 docs/gpuplan.1 $(DESTDIR)$(PREFIX)/share/man/man1/gpuplan.1
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 docs/gpuplan.bash-completion $(DESTDIR)$(PREFIX)/share/bash-completion/completions/gpuplan

# ---- fuzzing: libFuzzer targets in tests/fuzz/, clang + ASan + UBSan
FUZZ_SECONDS ?= 30
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN  := $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)
FUZZ_LIB_SRC := $(wildcard common/*.c pricing/*.c simulator/*.c)
FUZZ_FLAGS := -g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(C_INCLUDES) $(CJSON_CFLAGS) $(CURL_CFLAGS) \
              -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
build-fuzz/%: tests/fuzz/%.c $(FUZZ_LIB_SRC) $(wildcard tests/fuzz/*.h)
	@mkdir -p build-fuzz
	clang $(FUZZ_FLAGS) -o $@ $< $(FUZZ_LIB_SRC) -lcsv $(CJSON_LIBS) $(CURL_LIBS) -lm
# these run the command front-ends or the executor's readers in-process:
# every module, and cli/ but main.c
FUZZ_FULL := build-fuzz/fuzz_cli build-fuzz/fuzz_calibration_json
FUZZ_CLI_SRC := $(filter-out cli/main.c,$(wildcard cli/*.c planner/*.c export/*.c $(addsuffix /*.c,$(EXEC_DIRS))))
$(FUZZ_FULL): build-fuzz/%: tests/fuzz/%.c $(FUZZ_LIB_SRC) $(FUZZ_CLI_SRC) $(wildcard tests/fuzz/*.h)
	@mkdir -p build-fuzz
	clang $(FUZZ_FLAGS) $(MPI_CFLAGS) $(BLAS_CFLAGS) -iquote cli -o $@ $< $(FUZZ_LIB_SRC) $(FUZZ_CLI_SRC) \
	  -lglpk -lcsv $(CJSON_LIBS) $(CURL_LIBS) $(MPI_LIBS) $(BLAS_LIBS) -lm

# needs clang with libFuzzer (Debian/Ubuntu: apt-get install clang); each
# target ends with its judged counts: run, refused, accepted, round-tripped
fuzz: deps $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do n=$$(basename $$f); c=$${n#fuzz_}; mkdir -p build-fuzz/corpus-$$c; \
	  echo "== $$n ($(FUZZ_SECONDS) s, seeds in tests/fuzz/corpus/$$c)"; rm -f build-fuzz/counts-$$c; \
	  FUZZ_COUNTS=$(CURDIR)/build-fuzz/counts-$$c \
	  $$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=build-fuzz/$$c- \
	    build-fuzz/corpus-$$c tests/fuzz/corpus/$$c 2>&1 | \
	    grep -E 'stat::number_of_executed_units|ERROR|SUMMARY' ; \
	  rc=$${PIPESTATUS[0]}; cat build-fuzz/counts-$$c 2>/dev/null; \
	  test $$rc -eq 0 || exit 1; done

clean:
	rm -rf $(BUILD) build-asan build-fuzz

help:
	@echo "targets:"
	@echo "  all       build $(BIN) (default)"
	@echo "  run       install missing packages, build, run a planning query on the shipped data"
	@echo "  test      install missing packages, build, run every test (cmocka, CLI, MPI)"
	@echo "  bench     build and run the benchmarks in bench/"
	@echo "  check-exports  every export of 20 plans (and 6 trl plans) through Megatron-LM's,"
	@echo "            torchrun's, DeepSpeed's, TRL's, the Kubeflow CRDs' and SkyPilot's own"
	@echo "            checks, where present"
	@echo "  asan      run the tests under AddressSanitizer + UBSan (build-asan/)"
	@echo "  valgrind  run the CLI tests under valgrind memcheck"
	@echo "  cuda      build with the CUDA backend (needs nvcc; CUDA_HOME=$(CUDA_HOME))"
	@echo "  deps      install missing Debian packages: $(DEPS_PKGS)"
	@echo "  install   install binary, data and man page (PREFIX=$(PREFIX) DESTDIR=)"
	@echo "  fuzz      run each libFuzzer target for FUZZ_SECONDS (default 30) under ASan+UBSan"
	@echo "  clean     remove build outputs"
	@echo "knobs: DEVELOPER=1 adds -Werror; CUDA=auto|yes|no"

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_BIN:=.d)
