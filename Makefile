# cudashim: `make` builds build/libcudashim.so and build/cudashim; `make check` runs the tests.
CC      ?= gcc
PREFIX  ?= /usr/local
CUDA    ?= /usr/local/cuda
BUILD   ?= build
OPT     ?= -O2
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
# Parallel by default (make -j1 still works).
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(JOBS)
endif
WARN    := -Wall -Wextra -Wno-unused-parameter
# Messages are cut to their buffers on purpose; gcc's guess that they might be is noise.
WARN    += $(shell $(CC) -Werror -Wno-format-truncation -E -x c /dev/null >/dev/null 2>&1 && echo -Wno-format-truncation)
CFLAGS  ?=
SAN     ?=
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE $(OPT) -g $(WARN) $(SAN) $(CFLAGS)
SHIM_CFLAGS := $(BASE_CFLAGS) -fPIC -fvisibility=hidden -fno-semantic-interposition -fno-plt
# Sanitizer builds take the C fast path, whose memory accesses the sanitizers see (shim/entry/fast_asm.h).
SHIM_CFLAGS += $(if $(SAN),-DCS_FAST_C)
# Sanitizer builds also stop at a lock taken out of locks_table.h's order (the suite then fails).
SHIM_CFLAGS += $(if $(SAN),-DCS_LOCK_ORDER_CHECK)
# C files ask only for symbol versions glibc 2.17 has (shim/base/glibc_floor.h; t_34 checks it).
# Sanitizer builds are for this machine and their runtimes interpose unversioned: not pinned.
FLOOR_C := $(if $(SAN),,-include shim/base/glibc_floor.h)
# The command also starts through the oldest __libc_start_main (tools/cli/glibc_start.c).
FLOOR_CLI := $(if $(SAN),,$(FLOOR_C) -Wl,--wrap=__libc_start_main)
# What the pinned versions live in before glibc 2.34 (empty files after it, present in both).
GLIBC_OLD_LIBS := -Wl,--no-as-needed -l:libdl.so.2 -l:libpthread.so.0 -Wl,--as-needed
# -Bsymbolic: our own references bind to our own definitions, whatever the program exports.
# No DT_NEEDED beyond glibc's own files: a preload with a missing dependency stops every program.
# libdl and libpthread are named even where empty (glibc 2.34+): before 2.34 they hold the old
# versions glibc_floor.h binds to.
SHIM_LDFLAGS := -shared -Wl,--version-script=wrappers/gen/exports.map -Wl,-Bsymbolic -Wl,-z,defs \
                -Wl,-z,noexecstack $(SAN) $(GLIBC_OLD_LIBS)

SHIM_SRC := $(wildcard shim/*/*.c) $(wildcard wrappers/gen/*.c)
SHIM_ASM := $(wildcard shim/*/*.S) $(wildcard wrappers/gen/*.S)
SHIM_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(SHIM_SRC)) $(patsubst %.S,$(BUILD)/obj/%.o,$(SHIM_ASM))

FAKE_SRC := tests/fakes/fake_cuda.c tests/fakes/gen/fake_cuda_gen.c

# The cudashim command: the subcommands in tools/cli, plus the shim's pure parsers and tables.
CLI_SRC := $(wildcard tools/cli/*.c) $(addprefix shim/base/,fatbin.c image_explain.c reference.c reference_data.c \
           nccl_names.c alternatives.c build_info.c json.c library_names.c loader_message.c gemm_math.c) shim/evidence/needed_files.c shim/evidence/gpu_code_file.c \
           $(addprefix shim/rules/,driver.c view.c what_would_work.c loader.c)
CLI_HDR := $(wildcard tools/cli/*.h) $(wildcard shim/base/*.h) shim/trace/findings_table.h shim/trace/trace_records.h \
           shim/trace/calls_format.h shim/trace/findings.h shim/lifecycle/metrics_table.h shim/rules/rules.h \
           shim/evidence/needed_files.h shim/evidence/gpu_code_file.h shim/evidence/inventory.h

.PHONY: bench-cli bench-ranks all check check-arm64 check-real check-torch wheel deb stress asan tsan bench bench-smoke demo regen regen-tables install clean fuzz fuzz-build
all: $(BUILD)/libcudashim.so $(BUILD)/cudashim $(BUILD)/fakes/libcuda.so.1

# Each object depends on the headers it includes (-MMD), not on every header; and on this file,
# whose flags it was built with (so a tree built before -MMD is rebuilt once, whole).
# Each dependency file names its object both ways (the tests pass BUILD absolute, a user relative),
# so that either spelling of the build folder finds the headers an object depends on.
DEPFLAGS = -MMD -MP -MT $(abspath $@) -MT $(patsubst $(CURDIR)/%,%,$(abspath $@))
$(BUILD)/obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_CFLAGS) -DCS_PRELOAD $(FLOOR_C) $(DEPFLAGS) -c $< -o $@

# The dlsym path runs inside a sanitizer runtime's own start-up (it looks up functions with
# dlsym before its shadow memory exists), so these files are never instrumented.
EARLY_OBJ := $(BUILD)/obj/shim/entry/resolve.o $(BUILD)/obj/shim/loader/real.o $(BUILD)/obj/shim/loader/elf_sym.o \
             $(BUILD)/obj/shim/lifecycle/signal_hook.o
$(EARLY_OBJ): $(BUILD)/obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SAN),$(SHIM_CFLAGS)) -DCS_PRELOAD $(FLOOR_C) $(DEPFLAGS) -c $< -o $@

# The wrappers' fast paths store a few fields each; gcc's SLP vectoriser packs them into wide
# registers first, which costs more instructions than the stores (measured: 98 against 85 for
# cuLaunchKernel's fast path).
# They are also most of the build's time (thousands of bodies): the debugger's tracking of
# optimised-out locals and the second instruction-scheduling pass, worth nothing to an
# out-of-order CPU, cost a fifth of it (gcc; clang has neither).
WRAP_FAST_BUILD := $(shell $(CC) -Werror -fno-var-tracking -fno-schedule-insns2 -c -x c /dev/null -o /dev/null \
                     >/dev/null 2>&1 && echo -fno-var-tracking -fno-schedule-insns2)
$(filter $(BUILD)/obj/wrappers/%,$(SHIM_OBJ)): SHIM_CFLAGS += -fno-tree-slp-vectorize $(WRAP_FAST_BUILD)

-include $(SHIM_OBJ:.o=.d)

$(BUILD)/obj/%.o: %.S Makefile
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/libcudashim.so: $(SHIM_OBJ) wrappers/gen/exports.map
	$(CC) -o $@ $(SHIM_OBJ) $(SHIM_LDFLAGS)

# JANSSON_FLAGS: where another architecture's jansson is (make check-arm64 passes its cache's).
JANSSON_FLAGS ?=
$(BUILD)/cudashim: $(CLI_SRC) $(CLI_HDR) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SAN),$(BASE_CFLAGS)) $(FLOOR_CLI) -DCS_VERSION='"0.1.0"' -o $@ $(CLI_SRC) $(JANSSON_FLAGS) -ljansson $(GLIBC_OLD_LIBS)

# The fake driver: built with -Bsymbolic so its own internal calls never reach the shim.
$(BUILD)/fakes/libcuda.so.1: $(FAKE_SRC) tests/fakes/fake_cuda.h Makefile
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SAN),$(BASE_CFLAGS)) $(FLOOR_C) -fPIC -fvisibility=hidden -shared -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic \
	    -o $@ $(FAKE_SRC) $(GLIBC_OLD_LIBS)
	ln -sf libcuda.so.1 $(BUILD)/fakes/libcuda.so

check: all
	CC="$(CC)" BUILD="$(BUILD)" CUDA="$(CUDA)" tests/run-tests.sh

# NVIDIA's real driver (535) and CUDA 11.8 stack from Debian's non-free archive, fetched into a
# cache (never installed), then the real-stack suite. `make check` runs it too when the cache exists.
check-real: all
	tests/realstack/fetch.sh >/dev/null
	CC="$(CC)" BUILD="$(BUILD)" CUDA="$(CUDA)" bash tests/t_21_realstack.sh

# Debian's PyTorch 2.6 (CUDA 12.4) with NVIDIA's 550, 535 and 470 drivers, fetched into a cache
# (about 1.3 GB, 2 minutes, once) and run as a chroot: the framework suite. `make check` runs it
# too when the cache exists.
check-torch: all
	tests/torchbed/fetch.sh >/dev/null
	CC="$(CC)" BUILD="$(BUILD)" CUDA="$(CUDA)" bash tests/t_28_torchbed.sh

# The aarch64 build, cross-compiled into build-arm64, and its suite under qemu-aarch64 against the
# fake driver and NVIDIA's arm64 driver (fetched into a cache), with the arm64 wheel and .deb
# (jansson from the same cache): t_38; then the path and fast-path tests on that build under qemu
# (CS_RUN, tests/lib.sh). Needs Debian's
# gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user.
ARM64_CC    ?= aarch64-linux-gnu-gcc
ARM64_BUILD ?= build-arm64
ARM64_SYSROOT ?= /usr/aarch64-linux-gnu
check-arm64: all
	$(MAKE) CC=$(ARM64_CC) BUILD=$(ARM64_BUILD) $(ARM64_BUILD)/libcudashim.so $(ARM64_BUILD)/fakes/libcuda.so.1
	@if root=$$(tests/arm64/fetch.sh 2>/dev/null); then \
	    echo "$(MAKE) CC=$(ARM64_CC) BUILD=$(ARM64_BUILD) wheel deb"; \
	    $(MAKE) CC=$(ARM64_CC) BUILD=$(ARM64_BUILD) JANSSON_FLAGS="-I$$root/usr/include -L$$root/usr/lib/aarch64-linux-gnu" wheel deb; \
	else echo "the arm64 jansson could not be fetched (tests/arm64/fetch.sh): no arm64 packages, t_38 says so"; fi
	CC="$(CC)" BUILD="$(BUILD)" CUDA="$(CUDA)" XCC=$(ARM64_CC) ARM64_BUILD=$(ARM64_BUILD) tests/run-tests.sh t_38
	CS_RUN="qemu-aarch64 -L $(ARM64_SYSROOT)" CS_HOST_CLI=$(CURDIR)/$(BUILD)/cudashim CC=$(ARM64_CC) BUILD=$(ARM64_BUILD) \
	    CUDA="$(CUDA)" tests/run-tests.sh t_02 t_03 t_04 t_08 t_11 t_27
	tests/bench/fast-count.sh $(ARM64_BUILD)/libcudashim.so $(ARM64_CC:gcc=objdump) $(ARM64_CC:gcc=nm)

# Long runs, not in `make check`: threads, fork storms, multiprocessing, signals, a full disk.
stress: all
	CC="$(CC)" BUILD="$(BUILD)" CUDA="$(CUDA)" bash tests/stress/run.sh

# The whole suite against a sanitizer build of the shim (ASan + UBSan).
asan:
	$(MAKE) -j$(JOBS) BUILD=build-asan SAN="-fsanitize=address,undefined -fno-omit-frame-pointer" all
	CC="$(CC)" BUILD=build-asan CUDA="$(CUDA)" CS_SANITIZER=1 tests/run-tests.sh

# The whole suite against a ThreadSanitizer build of the shim: any report fails the test.
tsan:
	$(MAKE) -j$(JOBS) BUILD=build-tsan SAN="-fsanitize=thread" all
	CC="$(CC)" BUILD=build-tsan CUDA="$(CUDA)" CS_SANITIZER=tsan tests/run-tests.sh

bench: all
	BUILD=$(BUILD) CC="$(CC)" tests/bench/run-bench.sh
# The cudashim command on a 1M-call trace, two 100k-call traces and 2048 rank traces (figures).
bench-cli: all
	BUILD=$(BUILD) tests/bench/cli-bench.sh
bench-ranks: all
	BUILD=$(BUILD) CC="$(CC)" tests/bench/ranks-bench.sh
bench-smoke: all
	BENCH_QUICK=1 BUILD=$(BUILD) CC="$(CC)" tests/bench/run-bench.sh

demo: all
	tests/demo.sh $(BUILD)

# Regenerate the C from the tables (python3 only), or the tables from the toolkit headers.
regen:
	python3 wrappers/gen_c.py
	python3 tools/gen_reference.py
	python3 tools/update_config_doc.py
regen-tables:
	for api in cuda cudnn nccl cublas cublasLt cudart; do python3 wrappers/gen_table.py $$api wrappers/$$api.tbl || exit 1; done
	python3 wrappers/gen_c.py

# Packages, offline: a wheel for pip (the command linked with jansson statically, so it needs
# nothing but glibc; tagged manylinux for the newest glibc symbol version the binaries use) and
# a Debian package. PACKAGE_PYTHON is Debian's python3, whose python3-build, python3-setuptools
# and python3-wheel build the wheel. Both in $(BUILD)/dist.
VERSION := $(shell sed -n 's/^\#define CS_VERSION "\(.*\)"/\1/p' shim/trace/trace.h)
PACKAGE_PYTHON ?= /usr/bin/python3
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
MACHINE   := $(firstword $(subst -, ,$(MULTIARCH)))
DEB_ARCH  := $(or $(if $(filter aarch64,$(MACHINE)),arm64),$(if $(filter x86_64,$(MACHINE)),amd64),$(shell dpkg --print-architecture 2>/dev/null))
# A cross compiler's binutils (aarch64-linux-gnu-gcc: aarch64-linux-gnu-strip, -objdump).
TOOL_PREFIX := $(patsubst %gcc,%,$(filter %-gcc,$(notdir $(CC))))
STRIP   := $(TOOL_PREFIX)strip
OBJDUMP := $(TOOL_PREFIX)objdump
TAG_ENV := OBJDUMP=$(OBJDUMP) MACHINE=$(MACHINE)
$(BUILD)/cudashim-static: $(CLI_SRC) $(CLI_HDR) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SAN),$(BASE_CFLAGS)) $(FLOOR_CLI) -DCS_VERSION='"$(VERSION)"' -o $@ $(CLI_SRC) $(JANSSON_FLAGS) -Wl,-Bstatic -ljansson -Wl,-Bdynamic $(GLIBC_OLD_LIBS)

wheel: $(BUILD)/libcudashim.so $(BUILD)/cudashim-static
	rm -rf $(BUILD)/wheel-src $(BUILD)/dist/cudashim-*.whl && cp -r packaging/python $(BUILD)/wheel-src
	mkdir -p $(BUILD)/wheel-src/cudashim/_bin $(BUILD)/wheel-src/cudashim/_share/man/man1 $(BUILD)/dist
	$(STRIP) --strip-unneeded -o $(BUILD)/wheel-src/cudashim/_bin/libcudashim.so $(BUILD)/libcudashim.so
	$(STRIP) -o $(BUILD)/wheel-src/cudashim/_bin/cudashim $(BUILD)/cudashim-static
	cp docs/cudashim.1 $(BUILD)/wheel-src/cudashim/_share/man/man1/
	cp README.md $(BUILD)/wheel-src/
	printf '"""cudashim: the LD_PRELOAD shim and its command (python -m cudashim --help)."""\n__version__ = "%s"\n' \
	    "$(VERSION)" >$(BUILD)/wheel-src/cudashim/__init__.py
	cd $(BUILD)/wheel-src && CUDASHIM_PLAT=$$($(TAG_ENV) $(CURDIR)/packaging/manylinux_tag.sh cudashim/_bin/libcudashim.so cudashim/_bin/cudashim) \
	    $(PACKAGE_PYTHON) -m build --no-isolation --wheel --outdir $(abspath $(BUILD)/dist) .

deb: $(BUILD)/libcudashim.so $(BUILD)/cudashim
	rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/DEBIAN $(BUILD)/deb/usr/bin $(BUILD)/deb/usr/lib/$(MULTIARCH) \
	    $(BUILD)/deb/usr/share/man/man1 $(BUILD)/deb/usr/share/doc/cudashim $(BUILD)/dist
	$(STRIP) -o $(BUILD)/deb/usr/bin/cudashim $(BUILD)/cudashim && chmod 0755 $(BUILD)/deb/usr/bin/cudashim
	$(STRIP) --strip-unneeded -o $(BUILD)/deb/usr/lib/$(MULTIARCH)/libcudashim.so $(BUILD)/libcudashim.so
	chmod 0644 $(BUILD)/deb/usr/lib/$(MULTIARCH)/libcudashim.so
	gzip -9n <docs/cudashim.1 >$(BUILD)/deb/usr/share/man/man1/cudashim.1.gz
	gzip -9n <README.md >$(BUILD)/deb/usr/share/doc/cudashim/README.md.gz
	glibc=$$($(TAG_ENV) packaging/manylinux_tag.sh --glibc $(BUILD)/deb/usr/bin/cudashim $(BUILD)/deb/usr/lib/$(MULTIARCH)/libcudashim.so); \
	jansson=$$(dpkg-query -W -f '$${Version}' libjansson4 2>/dev/null | sed 's/-.*//'); \
	sed -e 's/@VERSION@/$(VERSION)/' -e 's/@ARCH@/$(DEB_ARCH)/' \
	    -e "s/@DEPENDS@/libc6 (>= $$glibc), libjansson4$${jansson:+ (>= $$jansson)}/" packaging/deb/control.in \
	    >$(BUILD)/deb/DEBIAN/control
	dpkg-deb --root-owner-group --build $(BUILD)/deb $(BUILD)/dist/cudashim_$(VERSION)_$(DEB_ARCH).deb

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BUILD)/cudashim $(DESTDIR)$(PREFIX)/bin/cudashim
	install -m 0644 $(BUILD)/libcudashim.so $(DESTDIR)$(PREFIX)/lib/libcudashim.so
	install -m 0644 docs/cudashim.1 $(DESTDIR)$(PREFIX)/share/man/man1/cudashim.1

# Fuzz the parsers with clang's libFuzzer under ASan + UBSan: the device-code parser (fatbins,
# cubins, PTX) and the trace reader with the report views and bug-report redaction over what it
# loads, and the shim's parsers of outside text (loader messages, the kernel module's version
# file, CUDASHIM_* values). FUZZ_SECONDS for each of the first two (default 270), FUZZ_TEXT_SECONDS
# for the last (default 60): ten minutes in all.
FUZZ_SECONDS ?= 270
FUZZ_TEXT_SECONDS ?= 60
FUZZ_RUN   = -artifact_prefix=$(BUILD)/fuzz-
FUZZ_FLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined
# The fuzzers alone (t_26 builds them, so that a source list that went stale fails the suite).
fuzz-build:
	@mkdir -p $(BUILD)
	clang $(FUZZ_FLAGS) -o $(BUILD)/fuzz_fatbin \
	    tests/fuzz/fuzz_fatbin.c shim/base/fatbin.c shim/base/image_explain.c shim/base/reference.c shim/base/reference_data.c
	clang $(FUZZ_FLAGS) -DCS_VERSION='"fuzz"' -o $(BUILD)/fuzz_trace tests/fuzz/fuzz_trace.c \
	    $(filter-out tools/cli/main.c,$(CLI_SRC)) -ljansson
	clang $(FUZZ_FLAGS) -o $(BUILD)/fuzz_text tests/fuzz/fuzz_text.c shim/base/loader_message.c shim/process/config.c
fuzz: fuzz-build
	@mkdir -p $(BUILD)/fuzz-corpus $(BUILD)/fuzz-trace-corpus $(BUILD)/fuzz-text-corpus
	$(BUILD)/fuzz_fatbin $(FUZZ_RUN) -max_total_time=$(FUZZ_SECONDS) -max_len=65536 $(BUILD)/fuzz-corpus tests/fixtures/fatbin
	$(BUILD)/fuzz_trace $(FUZZ_RUN) -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 $(BUILD)/fuzz-trace-corpus \
	    tests/fixtures/traces
	$(BUILD)/fuzz_text $(FUZZ_RUN) -max_total_time=$(FUZZ_TEXT_SECONDS) -max_len=4096 $(BUILD)/fuzz-text-corpus

clean:
	rm -rf build build-asan
