# ucsim's core (build/ucsim, built by tools/ucsim.sh) and the one rule that compiles the C wrapper
# mcs51.cc against it. Included by ../Makefile (mmbench) and Makefile (run51): both link $(MCS51_O)
# with $(MCS51_LIBS), so the wrapper is compiled once, with one set of flags (their CFLAGS and WARN).
MCS51_DIR := $(dir $(lastword $(MAKEFILE_LIST)))
UCSIM := $(abspath $(MCS51_DIR)../../../build/ucsim)
# ucsim's headers as system headers: our warnings stay errors, theirs are not ours to fix
UCSIM_INC = $(subst -I,-isystem ,$(shell cat $(UCSIM)/cppflags))
MCS51_O := $(abspath $(MCS51_DIR)../build/obj/mcs51.o)
MCS51_LIBS := $(UCSIM)/lib/libucsim51.a -lstdc++

$(MCS51_O): $(MCS51_DIR)mcs51.cc $(MCS51_DIR)mcs51.h $(MCS51_DIR)ucsim.mk $(UCSIM)/VERSION
	mkdir -p $(@D)
	g++ -std=c++17 $(CFLAGS) $(WARN) $(UCSIM_INC) -c -o $@ $(MCS51_DIR)mcs51.cc
