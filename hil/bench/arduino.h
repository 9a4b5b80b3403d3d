/*
 * Arduino mode (--arduino): both AVR nodes behave as an Arduino Mega 2560 does (arduino.c says how):
 * the stock stk500v2 bootloader in the boot section, every reset starting there, and a reset each time
 * the host opens the node's serial port (the board's DTR auto-reset).
 */
#ifndef MMBENCH_ARDUINO_H
#define MMBENCH_ARDUINO_H

#include <stdint.h>

#include "bench.h"

/* Debian's arduino-core-avr: the bootloader every Mega 2560 ships with */
#define ARDUINO_BOOTLOADER "/usr/share/arduino/hardware/arduino/avr/bootloaders/stk500v2/stk500boot_v2_mega2560.hex"
/* BOOTRST programmed, BOOTSZ = 4096 words (the Mega's fuses, high 0xD8): reset vector at byte 0x3E000 */
#define ARDUINO_BOOT_START 0x3E000u

struct arduino {
    int on;                 /* --arduino */
    const char *bootloader; /* --bootloader HEX (main.c: ARDUINO_BOOTLOADER when not given) */
    int ifd;                /* inotify: the ptys' slave sides, IN_OPEN */
    int wd[NNODES];         /* the watch of each node's current pty (-1: none) */
    uint64_t open_resets[NNODES]; /* resets on open, per node */
    uint32_t boot_bytes[NNODES];  /* the bootloader's size, per node (status) */
};
extern struct arduino arduino;

void arduino_load_bootloader(int id); /* after node_avr_load; dies on a bad file (exit 2) */
void arduino_watch(int id, const char *pts); /* after each (re)open of the node's pty (/dev/pts/N) */
int arduino_fd(void);                 /* the descriptor to poll (-1: not in arduino mode) */
void arduino_service(uint64_t now);   /* a host open of a pty since the last call: that node resets now */
void arduino_opened(int id, uint64_t now); /* the host connected to the node's line socket: it resets now */

#endif
