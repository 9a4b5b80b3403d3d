# The protocol's C library, for the Makefiles that build it into something (protocol/c, profiler-fw,
# executor): include this file, then use the variables below. Paths are relative to where it was
# included from, as the include named it (../protocol/c/..., or absolute).
#
#   MMPROTO_DIR         protocol/c
#   MMPROTO_INC         the include directory (-I$(MMPROTO_INC)); MMPROTO_HDRS its header(s)
#   MMPROTO_SRCS        every source of the library
#   MMPROTO_FRAME_SRCS  the frame layer and the messages (CRC, COBS encoder/decoder, message table):
#                       what a node that never reads or writes a u16/u32 field needs (the profiler)
#   MMPROTO_MODS, MMPROTO_FRAME_MODS   the same, as module names (mm_crc ...)
#
# mm_le (mm_get_u16/u32, mm_put_u16/u32) and mm_baud (mm_baud_div: a UART divisor for BAUD) are modules
# of their own because SDCC links whole modules: the 8051 profiler must not pay for them. MMPROTO_BAUD_SRC is
# mm_baud's source, for a node that links the frame layer and it (the AVR profiler); MMPROTO_LE_SRC mm_le's
# (the AVR profiler's histograms read and write u16/u32 fields).

MMPROTO_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
_mmproto_p := $(if $(filter .,$(MMPROTO_DIR)),,$(MMPROTO_DIR)/)
MMPROTO_INC := $(_mmproto_p)include
MMPROTO_HDRS := $(MMPROTO_INC)/mmproto.h
MMPROTO_FRAME_MODS := mm_crc mm_enc mm_dec mm_msg
MMPROTO_MODS := $(MMPROTO_FRAME_MODS) mm_le mm_baud
MMPROTO_FRAME_SRCS := $(MMPROTO_FRAME_MODS:%=$(_mmproto_p)src/%.c)
MMPROTO_SRCS := $(MMPROTO_MODS:%=$(_mmproto_p)src/%.c)
MMPROTO_BAUD_SRC := $(_mmproto_p)src/mm_baud.c
MMPROTO_LE_SRC := $(_mmproto_p)src/mm_le.c
