# SPDX-License-Identifier: GPL-2.0-only
#
# The layers of sfilter: the one statement of which directory may include
# and call which. The Makefile builds each layer's include path from it
# (*_INC), tests/check-layers.sh checks the code against it and checks that
# DEVELOPERS.md's "Layers" block is what `tests/check-layers.sh --graph`
# prints from it. Edit here, then paste that output into DEVELOPERS.md.
#
# LAYERS lists the layers bottom-up. For a layer L:
#   L_DIR    its directory
#   L_DEPS   the layers its files may include, every one of them: also those
#            a header it includes includes in turn (proto.h includes
#            bpf/sfilter.h, so whoever includes proto.h lists bpf)
#   L_ABOUT  one line for the graph in DEVELOPERS.md
#   L_ORDER  (optional) the header whose first comment orders the layer's
#            files, lowest first, a line each: "  LEVEL  file.c  what it
#            does" (LEVEL may be left out: the one above); a file calls only
#            files of a lower level
# A dependency is a layer listed before L. Keep one assignment a line,
# `NAME := words`: tests/check-layers.sh reads this file without make.

LAYERS := C2E BPF RUNTIME PROTO PROFILE CLIENT DAEMON CLI

C2E_DIR       := classic2ebpf
C2E_DEPS      :=
C2E_ABOUT     := libc2e: validate, translate, interpret, disassemble

BPF_DIR       := bpf
BPF_DEPS      :=
BPF_ABOUT     := the BPF programs and the types they share (sfilter.h)

RUNTIME_DIR   := loader/runtime
RUNTIME_DEPS  := C2E BPF
RUNTIME_ABOUT := libsfruntime: load, tier, chains, attach, cgroups, pins
RUNTIME_ORDER := loader/runtime/internal.h

PROTO_DIR     := loader/proto
PROTO_DEPS    := C2E BPF
PROTO_ABOUT   := libsfproto: wire messages, request checks, framing, event JSON, container ids

PROFILE_DIR   := loader/profile
PROFILE_DEPS  := C2E
PROFILE_ABOUT := libsfprofile: container seccomp profiles (JSON) to classic filters, with libseccomp and json-c

CLIENT_DIR    := loader/client
CLIENT_DEPS   := C2E BPF PROTO PROFILE
CLIENT_ABOUT  := libsfclient: sf_attach(), the one protocol client, the gate

DAEMON_DIR    := loader/daemon
DAEMON_DEPS   := C2E BPF RUNTIME PROTO PROFILE
DAEMON_ABOUT  := sfilterd

CLI_DIR       := loader/cli
CLI_DEPS      := C2E BPF PROTO PROFILE CLIENT
CLI_ABOUT     := sfctl, sfrun, sfilter-oci-hook, sfilter-runc, the interposer
