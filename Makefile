# Makefile - the single entry point of the build.
#
#   make            build every binary into build/bin/ (and test helpers)
#   make services   only the services' binaries (no test dependencies)
#   make run        install what running needs, build the services, start the suite
#   make test       install dependencies, build normal + sanitizer trees,
#                   run unit, integration and fuzz-smoke tests
#   make fuzz       run every fuzz target longer (FUZZ_SECONDS, default 60)
#   make bench      run the benchmarks (scripts/bench)
#   make SANITIZE=1 build the AddressSanitizer+UBSan tree into build/san/
#
# Sources are discovered by wildcard, so adding a file needs no edit here:
#   libcommon/src/<folder>/*.c -> $(BUILD)/lib/libcommon.a  (folders: docs/layout.md)
#   services/<svc>/*.c and services/<svc>/<wing>/*.c
#                              -> $(BUILD)/bin/<svc>   (the top main.c holds main())
#     a service's files, its tests and its fuzz targets include its headers by
#     their path under services/<svc>/ ("core/eval.h"), never another service's
#   tests/unit/libcommon/<folder>/test_*.c -> $(BUILD)/tests/libcommon_<folder>_test_* (cmocka)
#   tests/unit/<svc>/[<folder>/]test_*.c    -> $(BUILD)/tests/<svc>_[<folder>_]test_* (+ service lib)
#   tests/support/*.c          -> $(BUILD)/tests/support/*      (test helpers)
#   tests/support/<svc>/*.c    -> $(BUILD)/tests/support/<svc>_* (+ service lib)
#   tests/fuzz/fuzz_*.c        -> build/fuzz/fuzz_*             (libFuzzer)
#   tests/fuzz/<svc>/fuzz_*.c  -> build/fuzz/fuzz_<svc>_*       (+ the service's code)

.DEFAULT_GOAL := all
# The project's version, written here only: every binary's --version
# (libcommon/src/service/cli.c) prints it.
CM_VERSION := 0.1.0
.SECONDARY:
SHELL := /bin/bash

ifneq ($(SANITIZE),)
BUILD ?= build/san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
OPT ?= -O1
else
BUILD ?= build
SAN_FLAGS :=
OPT ?= -O2
endif

CC ?= cc
FUZZ_CC ?= clang

# llhttp is compiled from the C sources Debian's node-llhttp package ships.
LLHTTP_SRC ?= /usr/share/llhttp
LLHTTP_INC ?= /usr/share/include/llhttp

PKGS := libuv hiredis zlib rdkafka libpcre2-8 libmaxminddb nettle icu-i18n sqlite3 libpq libargon2
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN := -Wall -Wextra -Werror -Wformat=2 -Wno-missing-field-initializers
CPPFLAGS := -D_GNU_SOURCE -Ilibcommon/include -I$(LLHTTP_INC) $(PKG_CFLAGS)
CFLAGS := -std=c11 -g $(OPT) $(WARN) $(SAN_FLAGS) -MMD -MP
# --as-needed: a binary names only the shared libraries it calls (ingest links no
# libpq, SQLite, ICU or argon2 although PKG_LIBS lists them for every binary).
LDFLAGS := $(SAN_FLAGS) -Wl,--as-needed
LDLIBS := $(PKG_LIBS) -lmbedtls -lmbedx509 -lmbedcrypto -lm -lpthread

LIB_SRCS := $(wildcard libcommon/src/*/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
LLHTTP_OBJS := $(BUILD)/obj/llhttp/api.o $(BUILD)/obj/llhttp/http.o $(BUILD)/obj/llhttp/llhttp.o
LIBCOMMON := $(BUILD)/lib/libcommon.a

# A service's library exists as soon as it has sources; its binary once it has main.c.
SERVICES := $(sort $(notdir $(patsubst %/,%,$(dir $(wildcard services/*/main.c)))))
svc_srcs = $(wildcard services/$(1)/*.c services/$(1)/*/*.c)
SERVICE_BINS := $(patsubst services/%/main.c,$(BUILD)/bin/%,$(wildcard services/*/main.c))

# Unit tests mirror the code (docs/layout.md): tests/unit/libcommon/<folder>/test_<file>.c
# tests libcommon/src/<folder>/<file>.c, tests/unit/<service>/[<folder>/]test_<file>.c
# the service's; each builds to $(BUILD)/tests/<its path with _ for />.
UNIT_SRCS := $(wildcard tests/unit/libcommon/*/test_*.c)
UNIT_BINS := $(foreach s,$(UNIT_SRCS),$(BUILD)/tests/$(subst /,_,$(s:tests/unit/%.c=%)))
SVC_UNIT_SRCS := $(filter-out tests/unit/libcommon/%,$(wildcard tests/unit/*/test_*.c tests/unit/*/*/test_*.c))
SVC_UNIT_BINS := $(foreach s,$(SVC_UNIT_SRCS),$(BUILD)/tests/$(subst /,_,$(s:tests/unit/%.c=%)))
SUPPORT_SRCS := $(wildcard tests/support/*.c)
SUPPORT_BINS := $(SUPPORT_SRCS:tests/support/%.c=$(BUILD)/tests/support/%)
# tests/support/<svc>/x.c -> $(BUILD)/tests/support/<svc>_x (+ the service's library)
SVC_SUPPORT_SRCS := $(wildcard tests/support/*/*.c)
SVC_SUPPORT_BINS := $(foreach s,$(SVC_SUPPORT_SRCS),$(BUILD)/tests/support/$(subst /,_,$(s:tests/support/%.c=%)))

FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=build/fuzz/%)
# tests/fuzz/<svc>/fuzz_<x>.c -> build/fuzz/fuzz_<svc>_<x>, linked with the service's code.
FUZZ_SVC_SRCS := $(wildcard tests/fuzz/*/fuzz_*.c)
FUZZ_SVC_BINS := $(foreach f,$(FUZZ_SVC_SRCS),build/fuzz/fuzz_$(word 3,$(subst /, ,$(f)))_$(patsubst fuzz_%.c,%,$(notdir $(f))))

.PHONY: all services run test fuzz bench clean setup tests-build fuzz-build
all: $(SERVICE_BINS) tests-build
services: $(SERVICE_BINS) # the binaries alone (the Dockerfile's build stage)
tests-build: $(UNIT_BINS) $(SVC_UNIT_BINS) $(SUPPORT_BINS) $(SVC_SUPPORT_BINS)

# ---- libcommon ------------------------------------------------------------
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# llhttp's generated C is not ours: same sanitizers, but its warnings are its own.
$(BUILD)/obj/llhttp/%.o: $(LLHTTP_SRC)/%.c
	@mkdir -p $(@D)
	$(CC) -I$(LLHTTP_INC) -std=c11 -g $(OPT) $(SAN_FLAGS) -w -c $< -o $@

# cli.c carries the version (cm/cli.h); rebuilt when the Makefile changes.
$(BUILD)/obj/libcommon/src/service/cli.o build/fuzz/obj/libcommon/src/service/cli.o: \
	private CPPFLAGS += -DCM_VERSION='"$(CM_VERSION)"'
$(BUILD)/obj/libcommon/src/service/cli.o build/fuzz/obj/libcommon/src/service/cli.o: Makefile

# evstore.c builds in the DDL files of proto/event_store/ (.incbin).
$(BUILD)/obj/libcommon/src/evstore/evstore.o build/fuzz/obj/libcommon/src/evstore/evstore.o: \
	$(wildcard proto/event_store/*.sql)

$(LIBCOMMON): $(LIB_OBJS) $(LLHTTP_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# ---- generated C: lemon grammars (.y) and re2c tokenizers (.re) --------------
# Generated once into build/gen/ for every tree (the same text for each),
# compiled per tree; a service's files include them as "<wing>/<name>.h".
GEN := build/gen
LEMON_TEMPLATE ?= /usr/share/lemon/lempar.c
gen_objs = $(patsubst %.y,$(2)/obj/gen/%.o,$(wildcard services/$(1)/*/*.y)) \
	$(patsubst %.re,$(2)/obj/gen/%.o,$(wildcard services/$(1)/*/*.re))
gen_hdrs = $(patsubst %.y,$(GEN)/%.h,$(wildcard services/$(1)/*/*.y))
# Both trees share build/gen, and two makes may run at once (the plain and
# the sanitizer tree): each writes into a directory of its own and renames,
# so a compiler never reads a half-written grammar.c.
$(GEN)/%.c $(GEN)/%.h: %.y $(LEMON_TEMPLATE)
	@mkdir -p $(@D)
	@tmp=$$(mktemp -d $(@D)/.lemon.XXXXXX) && \
	lemon -q -T$(LEMON_TEMPLATE) -d$$tmp $< && \
	mv -f $$tmp/$(notdir $(basename $<)).h $(GEN)/$*.h && \
	mv -f $$tmp/$(notdir $(basename $<)).c $(GEN)/$*.c && rm -rf $$tmp
$(GEN)/%.c: %.re
	@mkdir -p $(@D)
	re2c -W -Werror --no-generation-date -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@
# lempar.c's template is not ours: its code gets our warnings but two.
GEN_CFLAGS := -Wno-unused-parameter -Wno-unused-variable
$(BUILD)/obj/gen/%.o: $(GEN)/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -I$(dir $(<:$(GEN)/%=%)).. -I$(GEN)/$(dir $*).. $(CFLAGS) $(GEN_CFLAGS) -c $< -o $@

# ---- services: every .c but main.c also goes into a library for unit tests -
define SERVICE_RULES
$(1)_OBJS := $$(patsubst %.c,$(BUILD)/obj/%.o,$$(call svc_srcs,$(1)))
$(1)_LIBOBJS := $$(filter-out $(BUILD)/obj/services/$(1)/main.o,$$($(1)_OBJS)) $$(call gen_objs,$(1),$(BUILD))
$(BUILD)/obj/services/$(1)/%.o $(BUILD)/obj/tests/unit/$(1)/%.o: private CPPFLAGS += -Iservices/$(1) -I$(GEN)/services/$(1)
$$($(1)_OBJS) $$(patsubst %.c,$(BUILD)/obj/%.o,$$(wildcard tests/unit/$(1)/*.c tests/unit/$(1)/*/*.c)): | $$(call gen_hdrs,$(1))
$(BUILD)/lib/lib$(1).a: $$($(1)_LIBOBJS)
	@mkdir -p $$(@D)
	rm -f $$@ && ar rcs $$@ $$^
$(BUILD)/bin/$(1): $(BUILD)/obj/services/$(1)/main.o $(BUILD)/lib/lib$(1).a $(LIBCOMMON)
	@mkdir -p $$(@D)
	$(CC) $(LDFLAGS) $$^ $(LDLIBS) -o $$@
endef
$(foreach s,$(SERVICES),$(eval $(call SERVICE_RULES,$(s))))

# ---- tests -------------------------------------------------------------------
$(BUILD)/obj/tests/unit/%.o: private CPPFLAGS += -Itests/unit

define LIB_UNIT_RULE
$(BUILD)/tests/$(subst /,_,$(1:tests/unit/%.c=%)): $(BUILD)/obj/$(1:.c=.o) $(LIBCOMMON)
	@mkdir -p $$(@D)
	$(CC) $(LDFLAGS) $$^ $(LDLIBS) -lcmocka -o $$@
endef
$(foreach t,$(UNIT_SRCS),$(eval $(call LIB_UNIT_RULE,$(t))))

define SVC_UNIT_RULE
$(BUILD)/tests/$(subst /,_,$(1:tests/unit/%.c=%)): $(BUILD)/obj/$(1:.c=.o) $(BUILD)/lib/lib$(word 3,$(subst /, ,$(1))).a $(LIBCOMMON)
	@mkdir -p $$(@D)
	$(CC) $(LDFLAGS) $$^ $(LDLIBS) -lcmocka -o $$@
endef
$(foreach t,$(SVC_UNIT_SRCS),$(eval $(call SVC_UNIT_RULE,$(t))))

define SVC_SUPPORT_RULE
$(BUILD)/tests/support/$(subst /,_,$(1:tests/support/%.c=%)): $(BUILD)/obj/$(1:.c=.o) $(BUILD)/lib/lib$(word 3,$(subst /, ,$(1))).a $(LIBCOMMON)
	@mkdir -p $$(@D)
	$(CC) $(LDFLAGS) $$^ $(LDLIBS) -o $$@
$(BUILD)/obj/$(1:.c=.o): private CPPFLAGS += -Iservices/$(word 3,$(subst /, ,$(1))) -I$(GEN)/services/$(word 3,$(subst /, ,$(1)))
$(BUILD)/obj/$(1:.c=.o): | $(call gen_hdrs,$(word 3,$(subst /, ,$(1))))
endef
$(foreach t,$(SVC_SUPPORT_SRCS),$(eval $(call SVC_SUPPORT_RULE,$(t))))

$(BUILD)/tests/support/%: $(BUILD)/obj/tests/support/%.o $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# ---- fuzzing (clang + libFuzzer; libcommon rebuilt with coverage) -----------
FUZZ_FLAGS := -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -MMD -MP
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=build/fuzz/obj/%.o)
build/fuzz/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -std=c11 $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(WARN) -c $< -o $@
build/fuzz/obj/llhttp/%.o: $(LLHTTP_SRC)/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) -I$(LLHTTP_INC) -std=c11 $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -w -c $< -o $@
build/fuzz/libcommon.a: $(FUZZ_LIB_OBJS) $(LLHTTP_OBJS:$(BUILD)/obj/%=build/fuzz/obj/%)
	rm -f $@ && ar rcs $@ $^
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c build/fuzz/libcommon.a
	$(FUZZ_CC) $(CPPFLAGS) -std=c11 $(FUZZ_FLAGS) -fsanitize=fuzzer $(WARN) $< $(filter %.a,$^) -Wl,--as-needed $(LDLIBS) -o $@
build/fuzz/obj/gen/%.o: $(GEN)/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -I$(dir $(<:$(GEN)/%=%)).. -I$(GEN)/$(dir $*).. -std=c11 $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(WARN) $(GEN_CFLAGS) -c $< -o $@
define FUZZ_SVC_RULES
build/fuzz/lib$(1).a: $$(patsubst %.c,build/fuzz/obj/%.o,$$(filter-out services/$(1)/main.c,$$(call svc_srcs,$(1)))) $$(call gen_objs,$(1),build/fuzz)
	rm -f $$@ && ar rcs $$@ $$^
build/fuzz/obj/services/$(1)/%.o build/fuzz/fuzz_$(1)_%: private CPPFLAGS += -Iservices/$(1) -I$(GEN)/services/$(1)
$$(patsubst %.c,build/fuzz/obj/%.o,$$(call svc_srcs,$(1))): | $$(call gen_hdrs,$(1))
endef
$(foreach s,$(SERVICES),$(eval $(call FUZZ_SVC_RULES,$(s))))

define FUZZ_SVC_BIN
build/fuzz/fuzz_$(word 3,$(subst /, ,$(1)))_$(patsubst fuzz_%.c,%,$(notdir $(1))): $(1) build/fuzz/lib$(word 3,$(subst /, ,$(1))).a build/fuzz/libcommon.a
	$$(FUZZ_CC) $$(CPPFLAGS) -std=c11 $$(FUZZ_FLAGS) -fsanitize=fuzzer $$(WARN) $$< $$(filter %.a,$$^) -Wl,--as-needed $$(LDLIBS) -o $$@
endef
$(foreach f,$(FUZZ_SVC_SRCS),$(eval $(call FUZZ_SVC_BIN,$(f))))

fuzz-build: $(FUZZ_BINS) $(FUZZ_SVC_BINS)

# ---- entry points --------------------------------------------------------------
# setup installs everything (test toolchain included); setup-run only what
# building the services and running them needs (scripts/setup's two lists).
.PHONY: setup-run
setup:
	@scripts/setup test

setup-run:
	@scripts/setup run

run: setup-run
	@$(MAKE) -j$$(nproc) --no-print-directory services
	@scripts/run

# The duration is printed at the end: make test must stay well under the
# 20 minutes CI allows it (docs: README).
test: setup
	@start=$$(date +%s); \
	$(MAKE) -j$$(nproc) --no-print-directory all && \
	$(MAKE) -j$$(nproc) --no-print-directory SANITIZE=1 all && \
	$(MAKE) -j$$(nproc) --no-print-directory fuzz-build && \
	scripts/test; rc=$$?; \
	t=$$(( $$(date +%s) - start )); \
	echo "make test: $$((t / 60)) min $$((t % 60)) s (setup excluded)"; \
	exit $$rc

fuzz: setup fuzz-build
	@scripts/fuzz $${FUZZ_SECONDS:-60}

bench: setup
	@$(MAKE) -j$$(nproc) --no-print-directory all
	@scripts/bench

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
