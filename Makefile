# SPDX-License-Identifier: GPL-2.0
#
# sfilter build. Shaped like libbpf-bootstrap: every output in $(OUTPUT),
# quiet unless V=1, wildcards so that adding a source file needs no edit here.
#
#   make            deps, build/libc2e.a, build/classic2ebpf, build/tests/sftest,
#                   build/bench/*
#   make test       all + fuzzers, then the suite on the host, the fuzzers for
#                   FUZZ_SHORT_SECONDS each, and the suite in the 6.1 guest
#   make demo       sfilterd, sfctl and sfrun on a confined shell (demo/demo.sh)
#   make fuzz       every fuzzer for FUZZ_SECONDS (default 600)
#   make vmlinux    regenerate vmlinux/$(ARCH)/vmlinux.h from the running kernel

OUTPUT ?= build
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
AR ?= ar

ARCH ?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/i.86/x86/' \
			       -e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/' \
			       -e 's/riscv64/riscv/' -e 's/s390x/s390/' \
			       -e 's/loongarch64/loongarch/')
VMLINUX := vmlinux/$(ARCH)/vmlinux.h

CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra
INCLUDES := -Iclassic2ebpf -Itests -Itests/lib -I$(OUTPUT)
ALL_CFLAGS := $(CFLAGS) $(WARNINGS) $(INCLUDES) -MMD -MP
LDFLAGS ?=
# Static so that the guest's initramfs needs no shared libraries.
STATIC_LIBS := -lseccomp -lbpf -lelf -lz -ljson-c -lpthread
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) \
	      -I$(dir $(VMLINUX)) $(INCLUDES)

FUZZ_CC ?= $(CLANG)
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) $(WARNINGS) \
	       $(INCLUDES) -MMD -MP
FUZZ_LIBS := -lseccomp -lbpf -lelf -lz
FUZZ_SECONDS ?= 600
FUZZ_SHORT_SECONDS ?= 60

# Debian packages the build, the tests, the guest and the fuzzers need.
DEB_PKGS := make gcc libc6-dev clang llvm libbpf-dev bpftool libelf-dev \
	    zlib1g-dev libseccomp-dev libjson-c-dev qemu-system-x86 \
	    busybox-static cpio gzip libclang-rt-14-dev

# --- sources (globbed) -------------------------------------------------------
LIB_SRCS := $(filter-out classic2ebpf/main.c,$(wildcard classic2ebpf/*.c))
CLI_SRCS := $(wildcard classic2ebpf/main.c)
TESTLIB_SRCS := $(wildcard tests/lib/*.c)
TEST_SRCS := $(wildcard tests/*.c) $(TESTLIB_SRCS)
# bench/bench_util.c is linked into every bench, not a bench itself.
BENCH_UTIL_SRCS := bench/bench_util.c
BENCH_SRCS := $(filter-out $(BENCH_UTIL_SRCS),$(wildcard bench/*.c))
FUZZ_SRCS := $(wildcard fuzz/*.c)
BPF_SRCS := $(wildcard bpf/*.bpf.c)

obj = $(patsubst %.c,$(OUTPUT)/obj/%.o,$(1))
fobj = $(patsubst %.c,$(OUTPUT)/fuzz/obj/%.o,$(1))

LIB_OBJS := $(call obj,$(LIB_SRCS))
TESTLIB_OBJS := $(call obj,$(TESTLIB_SRCS))
TEST_OBJS := $(call obj,$(TEST_SRCS))
LIBC2E := $(OUTPUT)/libc2e.a
LIBTEST := $(OUTPUT)/libsftest.a
CLI := $(if $(CLI_SRCS),$(OUTPUT)/classic2ebpf)
SFTEST := $(OUTPUT)/tests/sftest
BENCHES := $(patsubst bench/%.c,$(OUTPUT)/bench/%,$(BENCH_SRCS))
BENCH_UTIL_OBJS := $(call obj,$(BENCH_UTIL_SRCS))
FUZZERS := $(patsubst fuzz/%.c,$(OUTPUT)/fuzz/%,$(FUZZ_SRCS))
FUZZ_LIB := $(OUTPUT)/fuzz/libc2e-fuzz.a
FUZZ_LIB_OBJS := $(call fobj,$(LIB_SRCS) $(TESTLIB_SRCS))
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))

ALL_OBJS := $(LIB_OBJS) $(TEST_OBJS) $(call obj,$(CLI_SRCS) $(BENCH_SRCS)) $(BENCH_UTIL_OBJS)
ALL_FUZZ_OBJS := $(FUZZ_LIB_OBJS) $(call fobj,$(FUZZ_SRCS))
DIRS := $(sort $(OUTPUT) $(OUTPUT)/tests $(OUTPUT)/bench $(OUTPUT)/fuzz \
	       $(OUTPUT)/bpf $(dir $(ALL_OBJS) $(ALL_FUZZ_OBJS)))
DIRS := $(patsubst %/,%,$(DIRS))

# A stamp per package list: a changed list, or a fresh clone, checks again.
DEPS_STAMP := $(OUTPUT)/.deps-$(shell printf '%s ' $(DEB_PKGS) | cksum | cut -d' ' -f1)

# --- output style ------------------------------------------------------------
ifeq ($(V),1)
	Q =
	msg =
else
	Q = @
	msg = @printf '  %-8s %s%s\n' "$(1)" "$(patsubst $(abspath $(OUTPUT))/%,%,$(2))" "$(if $(3), $(3))";
	MAKEFLAGS += --no-print-directory
endif

.DELETE_ON_ERROR:
# Objects built through pattern rules are kept, not deleted as intermediates.
.PRECIOUS: $(OUTPUT)/obj/%.o $(OUTPUT)/fuzz/obj/%.o
.DEFAULT_GOAL := all
.PHONY: all deps test demo fuzz fuzz-bins fuzz-short vmlinux clean guest-kernel guest-shell bpf

all: deps $(LIBC2E) $(CLI) $(SFTEST) $(BENCHES) $(BPF_SKELS)

# --- packages ----------------------------------------------------------------
deps: $(DEPS_STAMP)

$(DEPS_STAMP): | $(OUTPUT)
	$(call msg,DEPS,checking $(words $(DEB_PKGS)) Debian packages)
	$(Q)missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q '^install ok installed$$' || echo $$p; done); \
	if [ -z "$$missing" ]; then touch $@; exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "warning: missing Debian packages:" $$missing \
		     "(run 'make deps' as root)" >&2; exit 0; fi; \
	echo "  APT      installing" $$missing; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -q </dev/null >$(OUTPUT)/apt.log 2>&1 && \
	apt-get install -y -q --no-install-recommends $$missing \
		</dev/null >>$(OUTPUT)/apt.log 2>&1 || \
		{ tail -20 $(OUTPUT)/apt.log >&2; exit 1; }; \
	touch $@

# --- libraries and programs --------------------------------------------------
$(DIRS):
	$(Q)mkdir -p $@

$(OUTPUT)/obj/%.o: %.c | $(DEPS_STAMP) $(DIRS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# An archive from no objects is valid, so this works before any library
# source exists. Rebuilt from scratch so a deleted source leaves no object.
$(LIBC2E): $(LIB_OBJS) | $(OUTPUT)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(LIBTEST): $(TESTLIB_OBJS) | $(OUTPUT)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(OUTPUT)/classic2ebpf: $(call obj,classic2ebpf/main.c) $(LIBC2E)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -static $(LDFLAGS) $^ $(STATIC_LIBS) -o $@

$(SFTEST): $(TEST_OBJS) $(LIBC2E) | $(OUTPUT)/tests
	$(call msg,BINARY,$@)
	$(Q)$(CC) -static $(LDFLAGS) $^ $(STATIC_LIBS) -o $@

$(OUTPUT)/bench/%: $(OUTPUT)/obj/bench/%.o $(BENCH_UTIL_OBJS) $(LIBTEST) $(LIBC2E) | $(OUTPUT)/bench
	$(call msg,BINARY,$@)
	$(Q)$(CC) -static $(LDFLAGS) $^ $(STATIC_LIBS) -o $@

# --- BPF objects and skeletons (the runtime) -----------------------------------
bpf: $(BPF_SKELS)

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX) $(wildcard bpf/*.h) | $(DEPS_STAMP) $(DIRS)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/%.skel.h: $(OUTPUT)/bpf/%.bpf.o | $(OUTPUT)
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# User code that includes a skeleton waits for it.
$(LIB_OBJS) $(TEST_OBJS) $(FUZZ_LIB_OBJS): | $(BPF_SKELS)

vmlinux: | $(DEPS_STAMP)
	$(call msg,GEN,$(VMLINUX))
	$(Q)mkdir -p $(dir $(VMLINUX))
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX).tmp
	$(Q)mv $(VMLINUX).tmp $(VMLINUX)

# --- fuzzers -----------------------------------------------------------------
# The library is compiled again, instrumented, into its own archive.
$(OUTPUT)/fuzz/obj/fuzz/%.o: fuzz/%.c | $(DEPS_STAMP) $(DIRS)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(OUTPUT)/fuzz/obj/%.o: %.c | $(DEPS_STAMP) $(DIRS)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_LIB): $(FUZZ_LIB_OBJS) | $(OUTPUT)/fuzz
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(OUTPUT)/fuzz/%: $(OUTPUT)/fuzz/obj/fuzz/%.o $(FUZZ_LIB)
	$(call msg,FUZZER,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer $^ $(FUZZ_LIBS) -o $@

fuzz-bins: deps $(FUZZERS)

fuzz: fuzz-bins
	$(Q)tests/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZERS)

fuzz-short: fuzz-bins
	$(Q)tests/run-fuzz.sh $(FUZZ_SHORT_SECONDS) $(FUZZERS)

# --- running -----------------------------------------------------------------
test: all fuzz-bins
	$(Q)FUZZ_SHORT_SECONDS=$(FUZZ_SHORT_SECONDS) tests/run-all.sh $(FUZZERS)

demo: deps $(CLI)
	$(Q)demo/demo.sh $(OUTPUT)/classic2ebpf

# Fetch and unpack the guest kernel ahead of time (tests/guest/run.sh would
# otherwise do it on first use).
guest-kernel: deps
	$(Q)tests/guest/kernel.sh >/dev/null

# An interactive busybox shell in the 6.1 guest, with sftest in /sf.
guest-shell: all
	$(Q)SF_GUEST_SHELL=1 tests/guest/run.sh $(SFTEST)

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

-include $(ALL_OBJS:.o=.d) $(ALL_FUZZ_OBJS:.o=.d)

# ===== BEGIN loader: sfilterd, libsfclient, sfrun (user side) =====
# Own rules (not the pattern rule) so these objects get -Iloader -Ibpf and
# the client library a PIC twin. sfilterd joins `all` once the runtime's
# own block (the rule for build/libsfruntime.a) is in this Makefile, so
# that `make` keeps working while the runtime is being written.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCDIR ?= $(PREFIX)/include
PCDIR ?= $(LIBDIR)/pkgconfig
INSTALL ?= install
SFCLIENT_VERSION := 0.1.0

LOADER_OBJDIR := $(OUTPUT)/obj/loader
LOADER_CFLAGS := $(ALL_CFLAGS) -Iloader -Iloader/runtime -Iloader/proto -Ibpf
LIBSFCLIENT := $(OUTPUT)/libsfclient.a
LIBSFCLIENT_SO := $(OUTPUT)/libsfclient.so
SFCLIENT_PC := $(OUTPUT)/sfclient.pc
LIBSFRUNTIME ?= $(OUTPUT)/libsfruntime.a
SF_HAVE_RUNTIME_BLOCK := $(shell awk '/^\# =+ BEGIN loader:/ {skip = 1} \
	!skip && /libsfruntime/ {print "yes"; exit} /^\# =+ END loader/ {skip = 0}' Makefile)
SFILTERD := $(if $(SF_HAVE_RUNTIME_BLOCK),$(OUTPUT)/sfilterd)
SFRUN := $(OUTPUT)/sfrun
SFCTL := $(OUTPUT)/sfctl
SFCTL_SRCS := $(filter-out loader/sfctl_rtstubs.c,$(wildcard loader/sfctl*.c))
SFCTL_OBJS := $(patsubst loader/%.c,$(LOADER_OBJDIR)/%.o,$(SFCTL_SRCS))
# Weak stand-ins for runtime calls not written yet, linked after
# libsfruntime.a so that a member is only pulled in for a missing symbol.
LIBSFSTUBS := $(if $(wildcard loader/sfctl_rtstubs.c),$(OUTPUT)/libsfstubs.a)
# The daemon: every loader/daemon/*.c (its modules: loader/daemon/daemon.h),
# which include each other's headers through -Iloader/daemon.
SFILTERD_SRCS := $(wildcard loader/daemon/*.c)
SFILTERD_OBJS := $(patsubst loader/%.c,$(LOADER_OBJDIR)/%.o,$(SFILTERD_SRCS))
$(SFILTERD_OBJS): LOADER_CFLAGS += -Iloader/daemon
LOADER_OBJS := $(addprefix $(LOADER_OBJDIR)/,sfclient.o sfclient.pic.o proto_client.o \
		 proto_client.pic.o sfrun.o) \
	       $(SFILTERD_OBJS) $(SFCTL_OBJS)
MANDIR ?= $(PREFIX)/share/man
SYSTEMD_UNITDIR ?= /lib/systemd/system
MAN_PAGES := $(wildcard man/*.[0-9])

all: $(LIBSFCLIENT) $(LIBSFCLIENT_SO) $(SFCLIENT_PC) $(SFRUN) $(SFILTERD) $(SFCTL)
.PHONY: install install-systemd loader

loader: $(LIBSFCLIENT) $(LIBSFCLIENT_SO) $(SFCLIENT_PC) $(SFRUN) $(SFILTERD) $(SFCTL)

$(LOADER_OBJDIR)/%.o: loader/%.c | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LOADER_CFLAGS) -c $< -o $@

$(LOADER_OBJDIR)/%.pic.o: loader/%.c | $(DEPS_STAMP)
	$(call msg,CC-PIC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LOADER_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

# sfilterd includes runtime.h, which includes bpf/sfilter.h; wait for the
# skeletons like the other user code.
$(SFILTERD_OBJS): | $(BPF_SKELS)

# The protocol's client side goes into the library (hidden in the .so).
$(LIBSFCLIENT): $(LOADER_OBJDIR)/sfclient.o $(LOADER_OBJDIR)/proto_client.o | $(OUTPUT)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(LIBSFCLIENT_SO): $(LOADER_OBJDIR)/sfclient.pic.o $(LOADER_OBJDIR)/proto_client.pic.o \
		  loader/libsfclient.map | $(OUTPUT)
	$(call msg,LIB,$@)
	$(Q)$(CC) -shared $(LDFLAGS) -Wl,-soname,libsfclient.so.0 \
		-Wl,--version-script=loader/libsfclient.map $(filter %.o,$^) -o $@
	$(Q)ln -sf libsfclient.so $@.0

$(SFCLIENT_PC): Makefile | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCDIR)' '' \
		'Name: sfclient' \
		'Description: attach seccomp-style filters through sfilterd (sfilter)' \
		'Version: $(SFCLIENT_VERSION)' \
		'Libs: -L$${libdir} -lsfclient' \
		'Cflags: -I$${includedir}' > $@

$(LOADER_OBJDIR)/sfctl_rtstubs.o: | $(BPF_SKELS)

$(OUTPUT)/libsfstubs.a: $(LOADER_OBJDIR)/sfctl_rtstubs.o | $(OUTPUT)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(OUTPUT)/sfilterd: $(SFILTERD_OBJS) $(LOADER_OBJDIR)/proto/event_json.o \
		   $(LIBSFRUNTIME) $(LIBSFSTUBS) $(LIBC2E)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -static $(LDFLAGS) $^ $(STATIC_LIBS) -o $@

# sfctl speaks the protocol (libsfclient's client side) and disassembles
# with libc2e; no runtime.
$(SFCTL_OBJS): | $(BPF_SKELS)
$(SFCTL): $(SFCTL_OBJS) $(LIBSFCLIENT) $(LIBC2E)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -static $(LDFLAGS) $^ $(STATIC_LIBS) -o $@

$(SFRUN): $(LOADER_OBJDIR)/sfrun.o $(LIBSFCLIENT) $(LIBC2E)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -static $(LDFLAGS) $^ $(STATIC_LIBS) -o $@

# tests/test_daemon_protocol.c calls sf_attach().
$(SFTEST): $(LIBSFCLIENT)

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(PCDIR)
	$(if $(SFILTERD),$(INSTALL) -m 755 $(SFILTERD) $(DESTDIR)$(BINDIR)/sfilterd)
	$(INSTALL) -m 755 $(SFRUN) $(DESTDIR)$(BINDIR)/sfrun
	$(INSTALL) -m 644 $(LIBSFCLIENT) $(DESTDIR)$(LIBDIR)/libsfclient.a
	$(INSTALL) -m 755 $(LIBSFCLIENT_SO) $(DESTDIR)$(LIBDIR)/libsfclient.so.0
	ln -sf libsfclient.so.0 $(DESTDIR)$(LIBDIR)/libsfclient.so
	$(INSTALL) -m 644 loader/sfclient.h $(DESTDIR)$(INCDIR)/sfclient.h
	$(INSTALL) -m 644 $(SFCLIENT_PC) $(DESTDIR)$(PCDIR)/sfclient.pc
	$(INSTALL) -m 755 $(SFCTL) $(DESTDIR)$(BINDIR)/sfctl
	for m in $(MAN_PAGES); do s=$${m##*.}; \
		$(INSTALL) -d $(DESTDIR)$(MANDIR)/man$$s && \
		$(INSTALL) -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/ || exit 1; done

# `make demo` (recipe above) runs the daemon and the tools.
demo: $(SFILTERD) $(SFCTL) $(SFRUN)

# The units run $(BINDIR)/sfilterd; `make install-systemd` installs both.
install-systemd: install
	$(INSTALL) -d $(DESTDIR)$(SYSTEMD_UNITDIR)
	for u in dist/sfilterd.service dist/sfilterd.socket; do \
		[ -f $$u ] || continue; \
		sed 's|@BINDIR@|$(BINDIR)|g' $$u > $(DESTDIR)$(SYSTEMD_UNITDIR)/$${u##*/} && \
		chmod 644 $(DESTDIR)$(SYSTEMD_UNITDIR)/$${u##*/} || exit 1; done
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null; then \
		systemctl daemon-reload || true; \
		echo "enable with: systemctl enable --now sfilterd.service"; fi

-include $(LOADER_OBJS:.o=.d)
# ===== END loader =====

# --- runtime library -----------------------------------------------------------
# Every loader/runtime/*.c (no main()) goes into build/libsfruntime.a, which
# the test runner and the benches link before libc2e.a. The runtime sees
# only its own headers, classic2ebpf's and the BPF side's (the skeleton in
# $(OUTPUT)), never tests/ or the rest of loader/; its objects include the
# skeleton, so they wait for it.
RUNTIME_SRCS := $(wildcard loader/runtime/*.c)
RUNTIME_OBJS := $(call obj,$(RUNTIME_SRCS))
LIBSFRUNTIME := $(OUTPUT)/libsfruntime.a
RUNTIME_INCLUDES := -Iloader/runtime -Iclassic2ebpf -Ibpf -I$(OUTPUT)
RUNTIME_CFLAGS := $(CFLAGS) $(WARNINGS) $(RUNTIME_INCLUDES) -MMD -MP
# What code that calls the runtime (tests, benches) adds to its own flags.
RUNTIME_USER_INCLUDES := -Iloader/runtime -Iloader/proto -Ibpf -Iloader

$(RUNTIME_OBJS): $(OUTPUT)/obj/%.o: %.c $(BPF_SKELS) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(RUNTIME_CFLAGS) -c $< -o $@

$(LIBSFRUNTIME): $(RUNTIME_OBJS) | $(OUTPUT)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(TEST_OBJS) $(call obj,$(BENCH_SRCS)): ALL_CFLAGS += $(RUNTIME_USER_INCLUDES)
$(TEST_OBJS) $(call obj,$(BENCH_SRCS)): | $(BPF_SKELS)
# The archive order matters for a static link: runtime, then libc2e.
$(SFTEST) $(BENCHES): $(LIBSFRUNTIME) | $(BPF_SKELS)
$(SFTEST) $(BENCHES): STATIC_LIBS := $(LIBSFRUNTIME) $(LIBC2E) $(STATIC_LIBS)
all: $(LIBSFRUNTIME)
-include $(RUNTIME_OBJS:.o=.d)

# The event log's JSON (loader/proto/event_json.c) is not the runtime's: it
# links json-c and goes into the daemon and the test runner beside it.
EVENT_JSON_OBJ := $(LOADER_OBJDIR)/proto/event_json.o
$(SFTEST): $(EVENT_JSON_OBJ)
-include $(EVENT_JSON_OBJ:.o=.d)
# --- end runtime library -----------------------------------------------------

# ===== BEGIN benches + libsfclient =====
# bench/attach_latency.c calls sf_attach(): every bench links libsfclient.a
# (after its own object, before the runtime and libc2e).
$(BENCHES): $(LIBSFCLIENT)
# ===== END benches + libsfclient =====

# ===== BEGIN daemon tests: proto.c, ASan sfilterd (restart, concurrency, fuzz) =====
# loader/proto.c holds the daemon's request parsing (fuzz/fuzz_proto.c
# includes it and fuzzes it in-process).
$(OUTPUT)/sfilterd: $(LOADER_OBJDIR)/proto.o
# Its replies are built with the client side's helpers (sf_proto_header(),
# sf_proto_add_cmsg()).
$(OUTPUT)/sfilterd: $(LOADER_OBJDIR)/proto_client.o
-include $(LOADER_OBJDIR)/proto.d
# build/sfilterd-asan: the daemon built with ASan+UBSan, dynamically linked,
# for tests/test_daemon_fuzz.c (tests/guest/run.sh brings its libraries).
ASAN_OUT := $(OUTPUT)/asan
ASAN_SRCS := $(SFILTERD_SRCS) loader/proto.c loader/proto_client.c \
	     loader/proto/event_json.c $(RUNTIME_SRCS) $(LIB_SRCS)
ASAN_OBJS := $(patsubst %.c,$(ASAN_OUT)/%.o,$(ASAN_SRCS))
SFILTERD_ASAN := $(OUTPUT)/sfilterd-asan
.PHONY: sfilterd-asan
sfilterd-asan: $(SFILTERD_ASAN)

ASAN_CFLAGS := -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) $(WARNINGS) -MMD -MP

$(ASAN_OUT)/%.o: %.c $(BPF_SKELS) | $(DEPS_STAMP)
	$(call msg,ASAN-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(ASAN_CFLAGS) $(INCLUDES) -Iloader -Iloader/runtime -Iloader/proto -Ibpf \
		-c $< -o $@

# The runtime under ASan: its own include paths, as in libsfruntime.a.
$(patsubst %.c,$(ASAN_OUT)/%.o,$(RUNTIME_SRCS)): $(ASAN_OUT)/%.o: %.c $(BPF_SKELS) | $(DEPS_STAMP)
	$(call msg,ASAN-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(ASAN_CFLAGS) $(RUNTIME_INCLUDES) -c $< -o $@

$(patsubst %.c,$(ASAN_OUT)/%.o,$(SFILTERD_SRCS)): ASAN_CFLAGS += -Iloader/daemon

$(SFILTERD_ASAN): $(ASAN_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) $(LDFLAGS) $^ -lseccomp -lbpf -lelf -lz -ljson-c -lpthread -o $@

test: $(SFILTERD_ASAN)
-include $(ASAN_OBJS:.o=.d)
# ===== END daemon tests =====
