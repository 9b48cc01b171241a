# SPDX-License-Identifier: GPL-2.0-only
#
# sfilter build. Shaped like libbpf-bootstrap: every output in $(OUTPUT),
# quiet unless V=1, wildcards so that adding a source file needs no edit
# here, and one block per library in the order the layers depend on each
# other. Which layer may include which is layers.mk's alone: each layer's
# objects see only their own headers, those of the layers layers.mk lets
# them use and the generated ones (*_INC, made from it); tests/check-layers.sh,
# run by `make test`, checks the code and DEVELOPERS.md against it.
#
#   make            the libraries, classic2ebpf, sfilterd, sfctl, sfrun,
#                   sfilter-oci-hook, build/tests/sftest, build/bench/*
#                   (never apt-get: `make deps` installs DEB_PKGS, and the
#                   goals that run things, test, demo, fuzz, image, do it first)
#   make test       all + fuzzers + the ASan daemon, then the suite on the
#                   host, the fuzzers for FUZZ_SHORT_SECONDS each, and the
#                   suite in the 6.1 guest
#   make demo       sfilterd, sfctl and sfrun on a confined shell (demo/demo.sh)
#   make fuzz       every fuzzer for FUZZ_SECONDS (default 600)
#   make image      the DaemonSet's OCI image: build/sfilter-image.tar (dist/image)
#   make vmlinux    regenerate vmlinux/$(ARCH)/vmlinux.h from the running kernel
#   make install    what a package ships, and only what it needs built:
#                   binaries, libsfclient, sfclient.h (and sfilter_flags.h), sfclient.pc, the
#                   interposers (LIBDIR/sfilter, where sfrun looks), man pages,
#                   the logrotate file (INSTALLED below); `make uninstall`
#                   removes the same list. CPPFLAGS, CFLAGS and LDFLAGS are
#                   honoured by every host compile and link.

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
LDFLAGS ?=
# Static so that the guest's initramfs needs no shared libraries.
STATIC_LIBS := -lseccomp -lbpf -lelf -lz -ljson-c -lpthread

FUZZ_CC ?= $(CLANG)
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_SECONDS ?= 600
FUZZ_SHORT_SECONDS ?= 15

# Debian packages the build (DEB_BUILD_PKGS), the tests, the guest and the
# fuzzers need.
DEB_BUILD_PKGS := make gcc libc6-dev clang llvm libbpf-dev bpftool libelf-dev \
	    zlib1g-dev libseccomp-dev libjson-c-dev
DEB_PKGS := $(DEB_BUILD_PKGS) qemu-system-x86 \
	    busybox-static cpio gzip libclang-rt-14-dev \
	    gcc-multilib libc6-dev-i386 bubblewrap golang-github-containers-common \
	    python3-yaml runc crun
# The engines and fleet tools the tests start for real, and `make image`
# (the block "image" below).
DEB_PKGS += podman buildah docker.io containerd prometheus
# Docker's default seccomp profile (moby's profiles/seccomp/default.json),
# which Debian ships only in the source package: tests and benches compare
# against it.
DEB_PKGS += golang-github-docker-docker-dev

# The version: one fact, in VERSION. C code reads SF_VERSION from
# $(OUTPUT)/include/sf_version.h, which is rewritten only when it changes.
SF_VERSION := $(shell cat VERSION)
VERSION_H := $(OUTPUT)/include/sf_version.h

# Each layer's include path (C2E_INC, ..., CLI_INC): its own directory, those
# of the layers layers.mk lists as its dependencies, and the generated
# headers (sf_version.h, the BPF skeletons). Nothing else, so that an include
# of a layer it may not use does not compile.
include layers.mk
GEN_INC := -I$(OUTPUT)/include
layer_inc = -I$($(1)_DIR) $(foreach d,$($(1)_DEPS),-I$($(d)_DIR)) $(GEN_INC)
$(foreach l,$(LAYERS),$(eval $(l)_INC := $(call layer_inc,$(l))))
# Tests, benches and fuzzers look at every layer but the CLIs'. loader/daemon
# comes last, for holder.h alone: tests/lib/daemon.h is found before its
# daemon.h.
TEST_INC    := -Itests -Itests/lib \
	       $(foreach l,$(filter-out DAEMON CLI,$(LAYERS)),-I$($(l)_DIR)) $(GEN_INC) \
	       -I$(DAEMON_DIR)

obj = $(patsubst %.c,$(OUTPUT)/obj/%.o,$(1))
pic = $(patsubst %.c,$(OUTPUT)/obj/%.pic.o,$(1))
fobj = $(patsubst %.c,$(OUTPUT)/fuzz/obj/%.o,$(1))
aobj = $(patsubst %.c,$(OUTPUT)/asan/%.o,$(1))

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
.PRECIOUS: $(OUTPUT)/obj/%.o $(OUTPUT)/obj/%.pic.o $(OUTPUT)/obj32/%.pic.o $(OUTPUT)/fuzz/obj/%.o $(OUTPUT)/asan/%.o
.DEFAULT_GOAL := all
.PHONY: all deps bpf test check-docs demo fuzz fuzz-bins fuzz-short sfilterd-asan vmlinux \
	guest-kernel guest-shell install install-systemd install-hooks clean

# --- packages ----------------------------------------------------------------
# A stamp per package list: a changed list, or a fresh clone, checks again.
DEPS_STAMP := $(OUTPUT)/.deps-$(shell printf '%s ' $(DEB_PKGS) | cksum | cut -d' ' -f1)
# A build never installs packages by itself (a distribution's build runs
# without network or root); the goals that need the packages depend on
# deps, and then compiling waits for it.
DEPS_GOALS := deps test demo fuzz fuzz-bins fuzz-short sfilterd-asan guest-kernel guest-shell image
DEPS_FIRST := $(if $(filter $(DEPS_GOALS),$(MAKECMDGOALS)),$(DEPS_STAMP))

deps: $(DEPS_STAMP)

# A compile that failed on a machine without the packages says which are
# missing and what to run, in one line, after the compiler's own words.
DEPS_HINT = { missing=$$(for p in $(DEB_BUILD_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q '^install ok installed$$' || echo $$p; done); \
	[ -z "$$missing" ] || echo "sfilter: missing Debian packages:" $$missing \
		"(run 'make deps' as root)" >&2; exit 1; }

$(DEPS_STAMP):
	$(Q)mkdir -p $(OUTPUT)
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

# --- compiling ---------------------------------------------------------------
# One rule per flavour; each object group sets LAYER_INC (a target-specific
# variable on the objects themselves, never on what links them).
$(OUTPUT)/obj/%.o: %.c | $(DEPS_FIRST) $(VERSION_H)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARNINGS) $(LAYER_INC) -MMD -MP -c $< -o $@ || $(DEPS_HINT)

$(OUTPUT)/obj/%.pic.o: %.c | $(DEPS_FIRST) $(VERSION_H)
	$(call msg,CC-PIC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARNINGS) $(LAYER_INC) -fPIC -fvisibility=hidden -MMD -MP \
		-c $< -o $@

$(VERSION_H): VERSION
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)printf '/* generated from VERSION */\n#define SF_VERSION "%s"\n' '$(SF_VERSION)' > $@.tmp
	$(Q)cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

archive = $(call msg,AR,$@) rm -f $@ && $(AR) rcs $@ $^
link_static = $(call msg,BINARY,$@) $(CC) -static $(CFLAGS) $(LDFLAGS) $(filter %.o %.a,$^) \
	$(STATIC_LIBS) -o $@

# --- classic2ebpf: libc2e.a and the classic2ebpf CLI ---------------------------
C2E_SRCS := $(filter-out classic2ebpf/main.c,$(wildcard classic2ebpf/*.c))
C2E_OBJS := $(call obj,$(C2E_SRCS))
LIBC2E := $(OUTPUT)/libc2e.a
C2E_CLI := $(OUTPUT)/classic2ebpf

$(C2E_OBJS) $(call obj,classic2ebpf/main.c): LAYER_INC := $(C2E_INC)

$(LIBC2E): $(C2E_OBJS)
	$(Q)$(archive)

$(C2E_CLI): $(call obj,classic2ebpf/main.c) $(LIBC2E)
	$(Q)$(link_static)

# --- bpf: the BPF objects and their skeletons -----------------------------------
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/include/%.skel.h,$(BPF_SRCS))
# v3: atomics that return their old value (compare-and-swap, fetch-add),
# which counting confined tasks needs (kernel 5.12 and later).
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -I$(dir $(VMLINUX)) $(BPF_INC)

bpf: $(BPF_SKELS)

# The product's programs include only this one; the others are the tests'
# and the benches', which `make install` does not build.
SFILTER_SKEL := $(OUTPUT)/include/sfilter.skel.h

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX) $(wildcard bpf/*.h) | $(DEPS_FIRST)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp || $(DEPS_HINT)
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/include/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

vmlinux: | $(DEPS_STAMP)
	$(call msg,GEN,$(VMLINUX))
	$(Q)mkdir -p $(dir $(VMLINUX))
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX).tmp
	$(Q)mv $(VMLINUX).tmp $(VMLINUX)

# --- runtime: libsfruntime.a ----------------------------------------------------
RUNTIME_SRCS := $(wildcard loader/runtime/*.c)
RUNTIME_OBJS := $(call obj,$(RUNTIME_SRCS))
LIBSFRUNTIME := $(OUTPUT)/libsfruntime.a

$(RUNTIME_OBJS): LAYER_INC := $(RUNTIME_INC)
$(RUNTIME_OBJS): | $(SFILTER_SKEL)

$(LIBSFRUNTIME): $(RUNTIME_OBJS)
	$(Q)$(archive)

# --- proto: libsfproto.a (messages, request checks, framing, event JSON, container ids)
PROTO_SRCS := $(wildcard loader/proto/*.c)
PROTO_OBJS := $(call obj,$(PROTO_SRCS))
LIBSFPROTO := $(OUTPUT)/libsfproto.a

$(PROTO_OBJS) $(call pic,$(PROTO_SRCS)): LAYER_INC := $(PROTO_INC)

$(LIBSFPROTO): $(PROTO_OBJS)
	$(Q)$(archive)

# --- profile: libsfprofile.a (container seccomp profiles, through libseccomp) ----
PROFILE_SRCS := $(wildcard loader/profile/*.c)
LIBSFPROFILE := $(OUTPUT)/libsfprofile.a

$(call obj,$(PROFILE_SRCS)) $(call pic,$(PROFILE_SRCS)): LAYER_INC := $(PROFILE_INC)

$(LIBSFPROFILE): $(call obj,$(PROFILE_SRCS))
	$(Q)$(archive)

# --- client: libsfclient (.a, .so, .pc) ------------------------------------------
# The tree's own programs link the internal archive $(OUTPUT)/libsfclient.a
# with libsfproto.a and the rest. What is installed is another pair built
# from one object set: the shared library and the static archive both hold
# the protocol's framing, the profile compiler (sf_attach_profile()) and the
# classic2ebpf code of the gate, and both show only the symbols of
# loader/client/libsfclient.map. The installed archive is one relocatable
# object whose other symbols are made local, so that it links alone (with
# -lseccomp -ljson-c -pthread) and its internals never clash with a
# program's own names.
CLIENT_SRCS := $(wildcard loader/client/*.c)
CLIENT_PROFILE_SRCS := loader/client/profile.c
# The gate (loader/client/selfgate.c) builds its filter with classic2ebpf: the
# files c2e_gate_build() and c2e_const_verdict() need go in as PIC objects.
CLIENT_C2E_SRCS := classic2ebpf/gate.c classic2ebpf/gate_tree.c classic2ebpf/gate_walk.c \
		   classic2ebpf/validate.c classic2ebpf/interp.c classic2ebpf/consttable.c \
		   classic2ebpf/rfc.c
CLIENT_PIC_SRCS := $(filter-out $(CLIENT_PROFILE_SRCS),$(CLIENT_SRCS)) loader/proto/framing.c \
		   $(CLIENT_C2E_SRCS)
LIBSFCLIENT := $(OUTPUT)/libsfclient.a
SFCLIENT_OBJS := $(call pic,$(CLIENT_PIC_SRCS) $(CLIENT_PROFILE_SRCS) $(PROFILE_SRCS))
SFCLIENT_MAP := loader/client/libsfclient.map
SFCLIENT_SYMS := $(OUTPUT)/lib/sfclient.syms
LIBSFCLIENT_PUB := $(OUTPUT)/lib/libsfclient.a
# The real file carries the version; the soname link what programs load;
# the plain .so is what -lsfclient finds at link time.
SFCLIENT_SONAME := libsfclient.so.0
LIBSFCLIENT_SO := $(OUTPUT)/lib/libsfclient.so.$(SF_VERSION)
SFCLIENT_PC := $(OUTPUT)/sfclient.pc
SFCLIENT_VERSION := $(SF_VERSION)
LD ?= ld
OBJCOPY ?= objcopy

$(call obj,$(CLIENT_SRCS)) $(call pic,$(CLIENT_SRCS)): LAYER_INC := $(CLIENT_INC)

$(LIBSFCLIENT): $(call obj,$(CLIENT_SRCS))
	$(Q)$(archive)

$(LIBSFCLIENT_SO): $(SFCLIENT_OBJS) $(SFCLIENT_MAP)
	$(call msg,LIB,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared $(CFLAGS) $(LDFLAGS) -Wl,-z,defs -Wl,-soname,$(SFCLIENT_SONAME) \
		-Wl,--version-script=$(SFCLIENT_MAP) $(filter %.o,$^) \
		-lseccomp -ljson-c -pthread -o $@
	$(Q)ln -sf $(@F) $(@D)/$(SFCLIENT_SONAME)
	$(Q)ln -sf $(SFCLIENT_SONAME) $(@D)/libsfclient.so

# The version script's global names, one a line, for objcopy.
$(SFCLIENT_SYMS): $(SFCLIENT_MAP)
	$(Q)mkdir -p $(@D)
	$(Q)sed -n 's/^[[:space:]]*\(sf_[a-z0-9_]*\);.*/\1/p' $< > $@

$(LIBSFCLIENT_PUB): $(SFCLIENT_OBJS) $(SFCLIENT_SYMS)
	$(call msg,AR,$@)
	$(Q)$(LD) -r -o $(@D)/sfclient.o $(filter %.o,$^)
	$(Q)$(OBJCOPY) --keep-global-symbols=$(SFCLIENT_SYMS) $(@D)/sfclient.o
	$(Q)rm -f $@ && $(AR) rcs $@ $(@D)/sfclient.o

# Generated files that say where things are installed, rewritten only when
# their content changes: `make install PREFIX=/usr` after `make` brings a
# .pc and an sfrun that name /usr, and a second run rebuilds nothing.
# $(replace_if_changed): $@.tmp becomes $@ only when they differ, so that
# what depends on $@ is rebuilt only then (says GEN only then).
replace_if_changed = if cmp -s $@.tmp $@; then rm -f $@.tmp; else \
	$(if $(Q),printf '  %-8s %s\n' GEN '$@' &&) mv -f $@.tmp $@; fi
# $(call gen_if_changed,TEXT) writes TEXT, printf's arguments, to $@ so.
gen_if_changed = mkdir -p $(@D) && printf $(1) > $@.tmp && $(replace_if_changed)

.PHONY: FORCE
FORCE:

$(SFCLIENT_PC): FORCE
	$(Q)$(call gen_if_changed,'%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCDIR)' '' \
		'Name: sfclient' \
		'Description: attach seccomp-style filters through sfilterd (sfilter)' \
		'Version: $(SFCLIENT_VERSION)' \
		'Libs: -L$${libdir} -lsfclient' \
		'Libs.private: -lseccomp -ljson-c -pthread' \
		'Cflags: -I$${includedir}')

# Where sfrun finds the interposers once installed (LIBDIR may be a
# multiarch directory).
PATHS_H := $(OUTPUT)/include/sf_paths.h

$(PATHS_H): FORCE
	$(Q)$(call gen_if_changed,'/* generated from the install directories (Makefile) */\n#define SF_PRELOAD_DIR "%s"\n' '$(PRELOAD_DIR)')

# --- daemon: sfilterd -------------------------------------------------------------
DAEMON_SRCS := $(wildcard loader/daemon/*.c)
DAEMON_OBJS := $(call obj,$(DAEMON_SRCS))
SFILTERD := $(OUTPUT)/sfilterd

$(DAEMON_OBJS): LAYER_INC := $(DAEMON_INC)
$(DAEMON_OBJS): | $(SFILTER_SKEL)

$(SFILTERD): $(DAEMON_OBJS) $(LIBSFRUNTIME) $(LIBSFPROFILE) $(LIBSFPROTO) $(LIBC2E)
	$(Q)$(link_static)

# The listener holder includes nothing of the daemon's but its own header:
# its objects alone are an archive, so that the tests link them.
LIBSFHOLDER := $(OUTPUT)/libsfholder.a

$(LIBSFHOLDER): $(call obj,loader/daemon/holder.c loader/daemon/holder_proc.c)
	$(Q)$(archive)

# --- cli: sfctl, sfrun and sfilter-oci-hook -----------------------------------------
OCI_HOOK_SRCS := $(wildcard loader/cli/oci_hook*.c)
SFCTL_SRCS := $(filter-out loader/cli/sfrun.c loader/cli/interpose.c $(OCI_HOOK_SRCS) $(wildcard loader/cli/runc_wrap*.c) \
		loader/cli/profile_cache.c,\
		$(wildcard loader/cli/*.c))
SFCTL := $(OUTPUT)/sfctl
SFRUN := $(OUTPUT)/sfrun
SFOCIHOOK := $(OUTPUT)/sfilter-oci-hook

$(call obj,$(wildcard loader/cli/*.c)): LAYER_INC := $(CLI_INC)

$(SFCTL): $(call obj,$(SFCTL_SRCS)) $(LIBSFCLIENT) $(LIBSFPROFILE) $(LIBSFPROTO) $(LIBC2E)
	$(Q)$(link_static)

$(call obj,loader/cli/sfrun.c): | $(PATHS_H)

$(SFRUN): $(call obj,loader/cli/sfrun.c loader/cli/cli.c) $(LIBSFCLIENT) $(LIBSFPROFILE) $(LIBSFPROTO) $(LIBC2E)
	$(Q)$(link_static)

# The OCI runtime hook: a createRuntime hook that attaches through sfilterd.
$(SFOCIHOOK): $(call obj,$(OCI_HOOK_SRCS) loader/cli/learned.c loader/cli/cli.c \
			loader/cli/profile_cache.c) $(LIBSFCLIENT) $(LIBSFPROFILE) $(LIBSFPROTO) $(LIBC2E)
	$(Q)$(link_static)

# --- cli: libsfprctl, the interposer sfrun --prctl / --take-seccomp preloads ----
# The client goes in whole and hidden; only prctl and syscall are exported.
# A 32-bit copy serves i386 programs (gcc-multilib).
PRCTL_SRCS := loader/cli/interpose.c $(CLIENT_PIC_SRCS)
LIBSFPRCTL := $(OUTPUT)/libsfprctl.so
LIBSFPRCTL32 := $(OUTPUT)/libsfprctl32.so
pic32 = $(patsubst %.c,$(OUTPUT)/obj32/%.pic.o,$(1))

$(OUTPUT)/obj32/%.pic.o: %.c | $(DEPS_FIRST) $(VERSION_H)
	$(call msg,CC32,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -m32 $(CPPFLAGS) $(CFLAGS) $(WARNINGS) $(LAYER_INC) -fPIC -fvisibility=hidden -MMD -MP \
		-c $< -o $@

$(call pic,loader/cli/interpose.c) $(call pic32,loader/cli/interpose.c): LAYER_INC := $(CLI_INC)
$(call pic32,$(CLIENT_SRCS)): LAYER_INC := $(CLIENT_INC)
$(call pic32,$(PROTO_SRCS)): LAYER_INC := $(PROTO_INC)
$(call pic,$(CLIENT_C2E_SRCS)) $(call pic32,$(CLIENT_C2E_SRCS)): LAYER_INC := $(C2E_INC)

$(LIBSFPRCTL): $(call pic,$(PRCTL_SRCS)) loader/cli/libsfprctl.map
	$(call msg,LIB,$@)
	$(Q)$(CC) -shared $(CFLAGS) $(LDFLAGS) -Wl,-z,defs -Wl,--version-script=loader/cli/libsfprctl.map \
		$(filter %.o,$^) -o $@ -ldl -pthread

$(LIBSFPRCTL32): $(call pic32,$(PRCTL_SRCS)) loader/cli/libsfprctl.map
	$(call msg,LIB,$@)
	$(Q)$(CC) -m32 -shared $(CFLAGS) $(LDFLAGS) -Wl,-z,defs -Wl,--version-script=loader/cli/libsfprctl.map \
		$(filter %.o,$^) -o $@ -ldl -pthread

# Only where $(CC) -m32 links (gcc-multilib, libc6-dev-i386): a build host
# without them still builds and installs the rest, and says so in one line.
# Asked once a run, when first expanded.
HAVE_M32 = $(eval HAVE_M32 := $$(shell printf '\043include <stdlib.h>\nint main(void) { return 0; }\n' | \
	$$(CC) -m32 -x c - -o /dev/null >/dev/null 2>&1 && echo 1))$(HAVE_M32)
PRCTL32 = $(if $(HAVE_M32),$(LIBSFPRCTL32),prctl32-skipped)

.PHONY: prctl32-skipped
prctl32-skipped:
	@echo "  SKIP     libsfprctl32.so: $(CC) -m32 cannot link (gcc-multilib, libc6-dev-i386)"

# --- cli: sfilter-runc, runc with sfilter for Docker and containerd ------------------
# runc_wrap*.c and what it reads as the hook reads it (oci_hook_spec.c);
# libsfprofile builds the gate; compiled profiles kept for the hook and the
# next container (profile_cache.c). A threaded program linked with glibc,
# sf-threads, is for tests/test_engine_docker.c (glibc's clone3 -> clone
# fallback under Docker's default profile): tests/progs/libc/ holds what
# needs a C library, which the -nostdlib images of tests/progs/ have not.
RUNC_WRAP_SRCS := $(wildcard loader/cli/runc_wrap*.c)
SFRUNCWRAP := $(OUTPUT)/sfilter-runc
SF_THREADS := $(OUTPUT)/tests/sf-threads

$(SFRUNCWRAP): $(call obj,$(RUNC_WRAP_SRCS) loader/cli/oci_hook_spec.c loader/cli/cli.c \
			 loader/cli/profile_cache.c) $(LIBSFPROFILE) \
	       $(LIBSFPROTO) $(LIBC2E)
	$(Q)$(link_static)

$(SF_THREADS): tests/progs/libc/threads.c
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 $(WARNINGS) -static -pthread $< -o $@

$(OUTPUT)/tests/sftest: $(SF_THREADS)

# --- tests and benches ------------------------------------------------------------
# Every tests/*.c and tests/lib/*.c links into one static runner; each
# bench/*.c but bench_util.c, bench_links.c and bench_moby.c (linked into every bench)
# is one binary.
TESTLIB_SRCS := $(wildcard tests/lib/*.c)
TEST_SRCS := $(wildcard tests/*.c) $(TESTLIB_SRCS)
TEST_OBJS := $(call obj,$(TEST_SRCS))
LIBTEST := $(OUTPUT)/libsftest.a
SFTEST := $(OUTPUT)/tests/sftest
BENCH_UTIL_SRCS := bench/bench_util.c bench/bench_links.c bench/bench_moby.c
BENCH_SRCS := $(filter-out $(BENCH_UTIL_SRCS),$(wildcard bench/*.c))
BENCHES := $(patsubst bench/%.c,$(OUTPUT)/bench/%,$(BENCH_SRCS))
# The order of a static link: what calls, then what is called.
USER_LIBS := $(LIBSFCLIENT) $(LIBSFPROFILE) $(LIBSFHOLDER) $(LIBSFRUNTIME) $(LIBSFPROTO) $(LIBC2E)

$(TEST_OBJS) $(call obj,$(BENCH_SRCS) $(BENCH_UTIL_SRCS)): LAYER_INC := $(TEST_INC)
$(TEST_OBJS) $(call obj,$(BENCH_SRCS) $(BENCH_UTIL_SRCS)): | $(BPF_SKELS)

$(LIBTEST): $(call obj,$(TESTLIB_SRCS))
	$(Q)$(archive)

# Images without a C library, whose system calls are all their own:
# tests/progs/NAME.c becomes sf-NAME (underscores as dashes) beside the
# runner (sf-first-call: tests/test_at_exec.c; sf-prctl36:
# tests/test_rfc2012_seed.c).
TEST_PROG_NAMES := $(basename $(notdir $(wildcard tests/progs/*.c)))
TEST_PROGS := $(foreach p,$(TEST_PROG_NAMES),$(OUTPUT)/tests/sf-$(subst _,-,$(p)))

$(SFTEST): $(TEST_OBJS) $(USER_LIBS) $(TEST_PROGS)
	$(Q)mkdir -p $(@D)
	$(Q)$(link_static)

define test_prog
$(OUTPUT)/tests/sf-$(subst _,-,$(1)): tests/progs/$(1).c
	$$(Q)mkdir -p $$(@D)
	$$(Q)$$(CC) -O2 -nostdlib -static -fno-stack-protector -fno-pie -no-pie $$< -o $$@
endef
$(foreach p,$(TEST_PROG_NAMES),$(eval $(call test_prog,$(p))))

$(OUTPUT)/bench/%: $(OUTPUT)/obj/bench/%.o $(call obj,$(BENCH_UTIL_SRCS)) $(LIBTEST) $(USER_LIBS)
	$(Q)mkdir -p $(@D)
	$(Q)$(link_static)

# --- fuzzers ----------------------------------------------------------------------
# libFuzzer targets link the translator, the test helpers and the
# protocol's checks, compiled again with the sanitizers into their own
# archive.
FUZZ_SRCS := $(wildcard fuzz/*.c)
FUZZERS := $(patsubst fuzz/%.c,$(OUTPUT)/fuzz/%,$(FUZZ_SRCS))
FUZZ_LIB := $(OUTPUT)/fuzz/libsf-fuzz.a
FUZZ_LIB_OBJS := $(call fobj,$(C2E_SRCS) $(TESTLIB_SRCS) loader/proto/checks.c \
				loader/proto/framing.c loader/client/reply.c $(PROFILE_SRCS))
FUZZ_CFLAGS := -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
	       $(WARNINGS) $(TEST_INC) -MMD -MP

$(OUTPUT)/fuzz/obj/%.o: %.c | $(DEPS_FIRST) $(BPF_SKELS) $(VERSION_H)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	$(Q)$(archive)

$(OUTPUT)/fuzz/%: $(OUTPUT)/fuzz/obj/fuzz/%.o $(FUZZ_LIB)
	$(call msg,FUZZER,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer $^ -lseccomp -lbpf -lelf -lz -ljson-c -o $@

fuzz-bins: deps $(FUZZERS)

fuzz: fuzz-bins
	$(Q)tests/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZERS)

fuzz-short: fuzz-bins
	$(Q)tests/run-fuzz.sh $(FUZZ_SHORT_SECONDS) $(FUZZERS)

# --- metrics: the HTTP server of sfilterd --metrics, in the tests and a fuzzer ----
# loader/daemon/http*.c include nothing of the daemon's: like the holder,
# they are an archive of their own that the test runner links; the fuzzer
# links the parsers, compiled again with the sanitizers.
LIBSFHTTP := $(OUTPUT)/libsfhttp.a

$(LIBSFHTTP): $(call obj,loader/daemon/http.c loader/daemon/http_wire.c)
	$(Q)$(archive)

$(SFTEST): $(LIBSFHTTP)
$(OUTPUT)/fuzz/fuzz_http: $(call fobj,loader/daemon/http_wire.c)

# --- sfilterd-asan: the daemon with ASan+UBSan, for tests/test_daemon_fuzz.c --------
# Dynamically linked; tests/guest/run.sh brings its libraries into the guest.
SFILTERD_ASAN := $(OUTPUT)/sfilterd-asan
ASAN_CFLAGS := -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) $(WARNINGS) -MMD -MP
ASAN_OBJS := $(call aobj,$(DAEMON_SRCS) $(RUNTIME_SRCS) $(PROFILE_SRCS) $(PROTO_SRCS) $(C2E_SRCS))

$(call aobj,$(DAEMON_SRCS)): LAYER_INC := $(DAEMON_INC)
$(call aobj,$(PROFILE_SRCS)): LAYER_INC := $(PROFILE_INC)
$(call aobj,$(RUNTIME_SRCS)): LAYER_INC := $(RUNTIME_INC)
$(call aobj,$(PROTO_SRCS)): LAYER_INC := $(PROTO_INC)
$(call aobj,$(C2E_SRCS)): LAYER_INC := $(C2E_INC)

$(OUTPUT)/asan/%.o: %.c | $(DEPS_FIRST) $(BPF_SKELS) $(VERSION_H)
	$(call msg,ASAN-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(ASAN_CFLAGS) $(LAYER_INC) -c $< -o $@

sfilterd-asan: $(SFILTERD_ASAN)

$(SFILTERD_ASAN): $(ASAN_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) $(LDFLAGS) $^ -lseccomp -lbpf -lelf -lz -ljson-c -lpthread -o $@

# --- all -----------------------------------------------------------------------------
all: $(LIBC2E) $(C2E_CLI) $(BPF_SKELS) $(LIBSFRUNTIME) $(LIBSFPROTO) $(LIBSFPROFILE) \
     $(LIBSFCLIENT) $(LIBSFCLIENT_PUB) $(LIBSFCLIENT_SO) $(SFCLIENT_PC) $(SFILTERD) $(SFCTL) $(SFRUN) $(SFOCIHOOK) \
     $(LIBSFPRCTL) $(PRCTL32) \
     $(SFRUNCWRAP) \
     $(SFTEST) $(BENCHES)

# --- running ---------------------------------------------------------------------------
test: deps all fuzz-bins $(SFILTERD_ASAN)
	$(Q)FUZZ_SHORT_SECONDS=$(FUZZ_SHORT_SECONDS) tests/run-all.sh $(FUZZERS)

# The docs against the code: man pages' options, DEVELOPERS.md's Layout
# table, figures stated twice (tests/check-docs.py; make test runs it too).
check-docs:
	$(Q)/usr/bin/python3 tests/check-docs.py

demo: deps $(C2E_CLI) $(SFILTERD) $(SFCTL) $(SFRUN)
	$(Q)demo/demo.sh $(C2E_CLI)

# Fetch and unpack the guest kernel ahead of time (tests/guest/run.sh would
# otherwise do it on first use).
guest-kernel: deps
	$(Q)tests/guest/kernel.sh >/dev/null

# An interactive busybox shell in the 6.1 guest, with sftest in /sf.
guest-shell: deps all
	$(Q)SF_GUEST_SHELL=1 tests/guest/run.sh $(SFTEST)

# --- install ---------------------------------------------------------------------------
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCDIR ?= $(PREFIX)/include
PCDIR ?= $(LIBDIR)/pkgconfig
# The interposers sfrun preloads (build/include/sf_paths.h).
PRELOAD_DIR ?= $(LIBDIR)/sfilter
MANDIR ?= $(PREFIX)/share/man
SYSTEMD_UNITDIR ?= /lib/systemd/system
# Where logrotate reads, whatever PREFIX is; the file names sfilterd's
# default log, /var/log/sfilterd.log.
LOGROTATEDIR ?= /etc/logrotate.d
# Podman's and CRI-O's directory for packages (/etc/containers/oci/hooks.d
# is the administrator's, and what the DaemonSet writes: docs/kubernetes.md).
HOOKSDIR ?= /usr/share/containers/oci/hooks.d
# The hook's --profile-dir in dist/oci-hooks.d/sfilter.json.
PROFILEDIR ?= /etc/sfilter/profiles
INSTALL ?= install

# The man pages are templates: @VERSION@ and @PRELOAD_DIR@ are filled in
# build/man, rewritten only when that changes the text.
MAN_PAGES := $(patsubst man/%,$(OUTPUT)/man/%,$(wildcard man/*.[0-9]))

$(OUTPUT)/man/%: man/% FORCE
	$(Q)mkdir -p $(@D) && sed -e 's|@VERSION@|$(SF_VERSION)|g' \
		-e 's|@PRELOAD_DIR@|$(PRELOAD_DIR)|g' $< > $@.tmp && $(replace_if_changed)

# The units run $(BINDIR)/sfilterd; the hooks.d file names
# $(BINDIR)/sfilter-oci-hook and $(PROFILEDIR).
$(OUTPUT)/dist/%: dist/% FORCE
	$(Q)mkdir -p $(@D) && sed -e 's|@BINDIR@|$(BINDIR)|g' \
		-e 's|@PROFILEDIR@|$(PROFILEDIR)|g' $< > $@.tmp && $(replace_if_changed)

# What each install goal puts where: one list, DEST:SOURCE:MODE (MODE
# "link": SOURCE is the link's text), read by the goal and by uninstall.
INSTALLED := $(foreach b,$(SFILTERD) $(SFCTL) $(SFRUN) $(SFOCIHOOK) $(SFRUNCWRAP) $(C2E_CLI),\
		$(BINDIR)/$(notdir $(b)):$(b):755) \
	     $(LIBDIR)/libsfclient.a:$(LIBSFCLIENT_PUB):644 \
	     $(LIBDIR)/$(notdir $(LIBSFCLIENT_SO)):$(LIBSFCLIENT_SO):755 \
	     $(LIBDIR)/$(SFCLIENT_SONAME):$(notdir $(LIBSFCLIENT_SO)):link \
	     $(LIBDIR)/libsfclient.so:$(SFCLIENT_SONAME):link \
	     $(INCDIR)/sfclient.h:loader/client/sfclient.h:644 \
	     $(INCDIR)/sfilter_flags.h:bpf/sfilter_flags.h:644 \
	     $(PCDIR)/sfclient.pc:$(SFCLIENT_PC):644 \
	     $(foreach l,$(LIBSFPRCTL) $(filter-out prctl32-skipped,$(PRCTL32)),\
		$(PRELOAD_DIR)/$(notdir $(l)):$(l):755) \
	     $(foreach m,$(MAN_PAGES),$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)):$(m):644) \
	     $(LOGROTATEDIR)/sfilterd:dist/logrotate/sfilterd:644
SYSTEMD_INSTALLED := $(foreach u,sfilterd.service sfilterd.socket,\
		$(SYSTEMD_UNITDIR)/$(u):$(OUTPUT)/dist/$(u):644)
HOOKS_INSTALLED := $(HOOKSDIR)/sfilter.json:$(OUTPUT)/dist/oci-hooks.d/sfilter.json:644

# The sources a list needs built (its entries but the links).
install_srcs = $(foreach e,$(1),$(if $(filter link,$(lastword $(subst :, ,$(e)))),,\
	$(word 2,$(subst :, ,$(e)))))
# Each file is written beside its place and renamed over it: a program
# running the old library, or CRI-O rereading hooks.d on every change, never
# sees half a file.
install_list = for e in $(1); do d=$(DESTDIR)$${e%%:*}; r=$${e\#*:}; s=$${r%:*}; m=$${r\#\#*:}; \
	$(if $(Q),printf '  %-8s %s\n' INSTALL "$$d";) \
	$(INSTALL) -d "$${d%/*}" && \
	if [ "$$m" = link ]; then ln -sfn "$$s" "$$d.tmp"; \
	else $(INSTALL) -m "$$m" "$$s" "$$d.tmp"; fi && \
	mv -fT "$$d.tmp" "$$d" || exit 1; done

.PHONY: uninstall
install: $(call install_srcs,$(INSTALLED)) $(PRCTL32)
	$(Q)$(call install_list,$(INSTALLED))

install-systemd: install $(call install_srcs,$(SYSTEMD_INSTALLED))
	$(Q)$(call install_list,$(SYSTEMD_INSTALLED))
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null; then \
		systemctl daemon-reload || true; \
		echo "enable with: systemctl enable --now sfilterd.service"; fi

# The hooks.d file (oci-hooks(5)) makes CRI-O and Podman add
# $(BINDIR)/sfilter-oci-hook, which `install` puts there, to containers
# annotated io.sfilter.profile or io.sfilter.take-seccomp.
install-hooks: install $(call install_srcs,$(HOOKS_INSTALLED))
	$(Q)$(INSTALL) -d $(DESTDIR)$(PROFILEDIR)
	$(Q)$(call install_list,$(HOOKS_INSTALLED))

# What the install goals put there, and the interposers' directory if that
# leaves it empty; never PROFILEDIR, whose profiles are the administrator's.
uninstall:
	$(Q)for e in $(INSTALLED) $(SYSTEMD_INSTALLED) $(HOOKS_INSTALLED); do \
		d=$(DESTDIR)$${e%%:*}; \
		if [ -e "$$d" ] || [ -L "$$d" ]; then \
			$(if $(Q),printf '  %-8s %s\n' RM "$$d" &&) rm -f "$$d" || exit 1; fi; done
	$(Q)rmdir $(DESTDIR)$(PRELOAD_DIR) 2>/dev/null || true

# --- image: the DaemonSet's OCI image (dist/image/Containerfile) ---------------------
# FROM scratch, built offline with buildah: the static binaries the
# manifest's commands run, Debian's static busybox as /bin/sh with the
# applets the init container's script calls, and the hooks.d file. The
# image goes into the containers-storage at IMAGE_ROOT (by default under
# $(OUTPUT), so that the system's is left alone; IMAGE_ROOT=/var/lib/containers/storage
# IMAGE_RUNROOT=/run/containers/storage IMAGE_DRIVER=overlay puts it in the
# system's Podman and CRI-O storage) and into IMAGE_ARCHIVE, an OCI archive
# for `podman load` and `ctr images import`. dist/kubernetes names
# IMAGE_NAME; tests/check-dist.py checks that it is this version's.
# tests/test_engine_podman.c runs the archive as the DaemonSet runs it.
IMAGE_VERSION := $(SFCLIENT_VERSION)
IMAGE_NAME := localhost/sfilter:$(IMAGE_VERSION)
IMAGE_ARCHIVE := $(OUTPUT)/sfilter-image.tar
IMAGE_STAGE := $(OUTPUT)/image
IMAGE_ROOT ?= $(abspath $(IMAGE_STAGE))/storage
IMAGE_RUNROOT ?= $(abspath $(IMAGE_STAGE))/run
IMAGE_DRIVER ?= vfs
IMAGE_SOURCE ?= $(or $(shell git config --get remote.origin.url 2>/dev/null),file://$(CURDIR))
IMAGE_REVISION = $(shell git rev-parse HEAD 2>/dev/null)
# What the manifest's commands run: the binaries in /usr/local/bin, and the
# busybox applets in /bin (tests/check-dist.py checks both lists against it).
IMAGE_BINS := $(SFILTERD) $(SFCTL) $(SFOCIHOOK)
IMAGE_APPLETS := sh cp chmod mv cat
BUSYBOX_STATIC ?= /bin/busybox
BUILDAH ?= buildah
# Without their debug information the binaries are a third of the image.
STRIP ?= strip
IMAGE_CTX := $(IMAGE_STAGE)/ctx
# buildah run by root writes its blob info cache to /var/lib/containers/cache
# whatever --root says (containers/image), and its CNI lock to /etc/cni/net.d.
# Building into the default IMAGE_ROOT keeps both off the system: the lock
# goes to its own network_config_dir, and /var/lib is read-only in a mount
# namespace of the build's own, where buildah keeps the cache in memory
# (mount --bind -o ro: a comma would end $(if)'s argument).
IMAGE_PRIVATE = $(if $(and $(filter file,$(origin IMAGE_ROOT)),$(filter 0,$(shell id -u))),\
	CONTAINERS_CONF=$(abspath $(IMAGE_STAGE))/containers.conf unshare -m sh -c \
	'mount --make-rprivate / && mount --bind -o ro /var/lib /var/lib && exec "$$@"' sh)
# The hooks.d file the engine tests fill in, beside the runner.
TEST_HOOKS_JSON := $(OUTPUT)/tests/sfilter-hooks.json

.PHONY: image

image: $(IMAGE_ARCHIVE)

# Built in the storage first, then pushed whole to the archive by rename:
# a failed build leaves no archive that a test would run.
$(IMAGE_ARCHIVE): dist/image/Containerfile dist/oci-hooks.d/sfilter.json \
		  $(IMAGE_BINS) | $(DEPS_STAMP)
	$(call msg,IMAGE,$(IMAGE_NAME) $@)
	$(Q)if readelf -l $(BUSYBOX_STATIC) | grep -q INTERP; then \
		echo "$(BUSYBOX_STATIC) is not static (install busybox-static)" >&2; exit 1; fi
	$(Q)rm -rf $(IMAGE_CTX) && mkdir -p $(IMAGE_CTX)/rootfs/usr/local/bin $(IMAGE_CTX)/rootfs/bin \
		$(IMAGE_CTX)/rootfs/tmp $(IMAGE_CTX)/rootfs/usr/local/share/sfilter/oci-hooks.d \
		$(IMAGE_STAGE)/tmp $(IMAGE_STAGE)/cni
	$(Q)printf '[network]\nnetwork_config_dir = "%s"\n' $(abspath $(IMAGE_STAGE))/cni \
		> $(IMAGE_STAGE)/containers.conf
	$(Q)cp $(IMAGE_BINS) $(IMAGE_CTX)/rootfs/usr/local/bin/
	$(Q)$(STRIP) $(addprefix $(IMAGE_CTX)/rootfs/usr/local/bin/,$(notdir $(IMAGE_BINS)))
	$(Q)cp $(BUSYBOX_STATIC) $(IMAGE_CTX)/rootfs/bin/busybox
	$(Q)for a in $(IMAGE_APPLETS); do ln -s busybox $(IMAGE_CTX)/rootfs/bin/$$a || exit 1; done
	$(Q)chmod 1777 $(IMAGE_CTX)/rootfs/tmp
	$(Q)sed -e 's|@BINDIR@|/usr/local/bin|g' -e 's|@PROFILEDIR@|/etc/sfilter/profiles|g' \
		dist/oci-hooks.d/sfilter.json > $(IMAGE_CTX)/rootfs/usr/local/share/sfilter/oci-hooks.d/sfilter.json
	$(Q)cp dist/image/Containerfile $(IMAGE_CTX)/Containerfile
	$(Q)export TMPDIR=$(abspath $(IMAGE_STAGE))/tmp; \
	b="$(BUILDAH) --root $(IMAGE_ROOT) --runroot $(IMAGE_RUNROOT) --storage-driver $(IMAGE_DRIVER)"; \
	$(IMAGE_PRIVATE) $$b bud --quiet --build-arg VERSION=$(IMAGE_VERSION) --build-arg SOURCE=$(IMAGE_SOURCE) \
		--build-arg REVISION=$(IMAGE_REVISION) -t $(IMAGE_NAME) -f $(IMAGE_CTX)/Containerfile \
		$(IMAGE_CTX) >/dev/null && \
	rm -f $@.tmp && $(IMAGE_PRIVATE) $$b push --quiet $(IMAGE_NAME) oci-archive:$@.tmp:$(IMAGE_NAME) && \
	mv -f $@.tmp $@

$(TEST_HOOKS_JSON): dist/oci-hooks.d/sfilter.json
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@

# The DaemonSet's init container script, which the image test runs in the
# image as the kubelet would.
TEST_INIT_SH := $(OUTPUT)/tests/sfilter-init.sh

$(TEST_INIT_SH): dist/kubernetes/sfilterd-daemonset.yaml tests/check-dist.py | $(DEPS_FIRST)
	$(Q)mkdir -p $(@D)
	$(Q)/usr/bin/python3 tests/check-dist.py --init-script > $@.tmp && mv -f $@.tmp $@

$(SFTEST): $(TEST_HOOKS_JSON) $(TEST_INIT_SH)

# The suite runs the image where buildah can build it; without buildah the
# test says so and skips.
test: $(if $(shell command -v $(BUILDAH) 2>/dev/null),image)

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

-include $(shell find $(OUTPUT)/obj $(OUTPUT)/obj32 $(OUTPUT)/fuzz/obj $(OUTPUT)/asan -name '*.d' 2>/dev/null)
