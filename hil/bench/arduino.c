/*
 * Arduino mode (--arduino): both AVR nodes behave as an Arduino Mega 2560.
 *
 * Bootloader. A Mega 2560 leaves the factory with Arduino's stk500v2 bootloader in the boot section
 * and its fuses set so that every reset (power-on, the RESET pin, the watchdog, brown-out) starts
 * there: BOOTRST programmed, BOOTSZ = 4096 words, so the reset vector is byte 0x3E000. The bench loads
 * that very file (Debian's arduino-core-avr, or --bootloader HEX) into flash beside the application
 * image and sets simavr's reset PC (avr->reset_pc: avr_reset starts every core there) to 0x3E000. The
 * bootloader then does what it does on the board: it waits for a byte on USART0 (115200 baud) for
 * 0.8325 s and then jumps to 0; a byte received in that window makes it stay in its STK500v2 command
 * loop for seconds (on two real Megas every handshake failed so). It clears MCUSR, so the application always reads 0 there. After a
 * watchdog reset it means to jump to the application at once, but through an EICALL with EIND = 1: it
 * lands in empty flash at 0x20000, runs up into itself again (3.84 ms) and waits the full time
 * (measured: docs/bench.md, "Arduino mode"). simavr's hex reader prints "unsupported check type 03"
 * for the file's start-address record, which the bench does not need (the reset PC is the fuses'). 
 *
 * Reset on open. On the board the USB chip (ATmega16U2) asserts DTR when the host opens the port,
 * and DTR pulls RESET low through a 100 nF capacitor: every open resets the MCU; a close does not.
 * A connection to the node's line socket is an open too (uart_host.c calls arduino_opened when it
 * takes the connection, before it reads a byte from it).
 * The bench keeps its own slave descriptor of each pty open (uart_host.c), so the host's open is
 * not visible on the master side; it is seen with inotify instead (IN_OPEN on /dev/pts/N: every
 * open(2) of the slave, pyserial's included, queues one event; the bench's own open is made before
 * the watch exists). The node then gets the reset command's reset (RESET pin: MCUSR EXTRF, its UART
 * side re-armed) at the virtual time the bench notices the open: before any byte the host wrote after
 * opening is taken (uart_read_pty asks here first), in every mode: unpaced and paced at the next look
 * at the descriptors (the inotify descriptor is polled with the ptys); lockstep at a grant point only
 * (while waiting for a grant, and where the next grant takes the host's bytes), so the run stays a
 * function of the host's opens, grants and bytes.
 */
#define _GNU_SOURCE
#include "arduino.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <simavr/sim_avr.h>
#include <simavr/sim_hex.h>

#include "cosim.h"
#include "node_avr.h"
#include "trace.h"

struct arduino arduino = {.ifd = -1, .wd = {-1, -1}};

void arduino_load_bootloader(int id)
{
    avr_t *a = node_avr(cosim_node(id))->avr;
    ihex_chunk_p chunks = NULL;
    int n, i;
    uint32_t total = 0;

    if (access(arduino.bootloader, R_OK))
        die("bootloader %s: %s (Debian: apt-get install arduino-core-avr; or --bootloader HEX)", arduino.bootloader,
            strerror(errno));
    n = read_ihex_chunks(arduino.bootloader, &chunks);
    if (n <= 0)
        die("bootloader %s: not an Intel hex file with data", arduino.bootloader);
    /* the application must end below the boot section (a Mega's application section is 0..0x3DFFF) */
    if (a->codeend > ARDUINO_BOOT_START)
        die("%s image reaches 0x%x, into the boot section at 0x%x", node_names[id], (unsigned)a->codeend,
            ARDUINO_BOOT_START);
    for (i = 0; i < n; i++) {
        if (chunks[i].baseaddr < ARDUINO_BOOT_START || chunks[i].baseaddr + chunks[i].size > a->flashend + 1u)
            die("bootloader %s: data at 0x%x..0x%x, outside the boot section 0x%x..0x%x", arduino.bootloader,
                (unsigned)chunks[i].baseaddr, (unsigned)(chunks[i].baseaddr + chunks[i].size - 1), ARDUINO_BOOT_START,
                (unsigned)a->flashend);
        avr_loadcode(a, chunks[i].data, chunks[i].size, chunks[i].baseaddr);
        total += chunks[i].size;
    }
    free_ihex_chunks(chunks);
    arduino.boot_bytes[id] = total;
    a->codeend = a->flashend + 1u; /* code runs up there now */
    a->reset_pc = ARDUINO_BOOT_START; /* avr_reset: pc = reset_pc (every later reset) */
    a->pc = ARDUINO_BOOT_START;       /* power-on */
}

void arduino_watch(int id, const char *pts)
{
    if (!arduino.on)
        return;
    if (arduino.ifd < 0) {
        arduino.ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (arduino.ifd < 0)
            die("inotify_init1: %s", strerror(errno));
    }
    arduino.wd[id] = inotify_add_watch(arduino.ifd, pts, IN_OPEN);
    if (arduino.wd[id] < 0)
        die("cannot watch %s for opens: %s", pts, strerror(errno));
}

int arduino_fd(void)
{
    return arduino.ifd;
}

static void reset_on_open(int id, uint64_t now)
{
    arduino.open_resets[id]++;
    cosim_external_reset(id, now); /* and the UART bridge (cosim_on_reset) */
    logmsg("%s: port opened by the host: reset (DTR) at virtual %.6f s", node_names[id], (double)now / (double)F_CPU);
    TRACE("R %" PRIu64 " %s open\n", now, node_names[id]);
}

void arduino_opened(int id, uint64_t now)
{
    if (arduino.on)
        reset_on_open(id, now);
}

void arduino_service(uint64_t now)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    if (arduino.ifd < 0)
        return;
    for (;;) {
        ssize_t r = read(arduino.ifd, buf, sizeof buf);
        char *p;
        if (r <= 0)
            return;
        for (p = buf; p < buf + r;) {
            const struct inotify_event *e = (const struct inotify_event *)p;
            int id;
            for (id = 0; id < NNODES; id++)
                if (e->wd == arduino.wd[id] && (e->mask & IN_OPEN))
                    reset_on_open(id, now);
            p += sizeof *e + e->len;
        }
    }
}
