/*
 * mcs51.h on ucsim's internal C++ API (sdcc 4.2.0+dfsg-1's sim/ucsim: pinned by tools/ucsim.sh,
 * because these classes change between releases). Kept thin: ucsim does the 8051; this file only
 *
 *   - builds ucsim's application as its s51 program would (same options: -t 87C51 -X 11.0592M), with
 *     its console and the UART's files on /dev/null, and never runs its command loop;
 *   - adds one hardware element of its own (mm_watch) to the core. ucsim ticks every hardware element
 *     once per machine cycle, in the order they were added, so mm_watch, added last, sees each machine
 *     cycle just after the timers and the UART did: that gives the clock to one machine cycle, the end
 *     of the UART's transmissions and the moment to start a queued received byte. The same element
 *     registers the P1 and P2 cells (and their bit cells: SETB/CLR P1.n write those), so ucsim hands
 *     it every write to them, at the end of the writing instruction (ucsim ticks an instruction's
 *     cycles before it executes it).
 *
 * The UART's state (transmitter busy, its byte; the receiver's input byte) is protected in ucsim's
 * cl_serial; it is read through pointers to members taken in a derived class (uart_access), which is
 * legal C++ and touches nothing else.
 */
#include "mcs51.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

// ucsim (build/ucsim/cppflags)
#include "globals.h"
#include "appcl.h"
#include "simcl.h"
#include "uccl.h"
#include "hwcl.h"
#include "memcl.h"
#include "sim51cl.h"
#include "serialcl.h"
#include "portcl.h"
#include "regs51.h"
#include "fiocl.h"

namespace {

// ucsim's cl_serial keeps its state protected: pointers to those members, taken where access is given.
struct uart_access : cl_serial {
    static constexpr bool cl_serial::*sending = &uart_access::s_sending;
    static constexpr uchar cl_serial::*out = &uart_access::s_out;
    static constexpr bool cl_serial::*receiving = &uart_access::s_receiving;
    static constexpr char cl_serial_hw::*input = &uart_access::input;
    static constexpr bool cl_serial_hw::*input_avail = &uart_access::input_avail;
};

const unsigned RXQ = 256;

}  // namespace

class mm_watch;

struct mcs51 {
    cl_app *app;
    cl_sim *sim;
    cl_uc *uc;
    cl_port *p0;
    cl_serial *uart;
    cl_address_space *sfr;
    mm_watch *watch;
    mcs51_port_fn port_fn;
    void *port_ctx;
    mcs51_tx_fn tx_fn;
    void *tx_ctx;
    uint8_t rxq[RXQ];
    unsigned rx_head, rx_count;
    unsigned long rx_lost;
    const char *error;
    bool brk;            // a callback asked mcs51_run_until to return
};

class mm_watch : public cl_hw {
public:
    mcs51 *m;
    uint64_t cycles;      // machine cycles since mcs51_create
    bool tx_busy;
    cl_address_space *sfr, *bits;
    cl_memory_cell *port_cell[2];

    mm_watch(cl_uc *auc, mcs51 *am) : cl_hw(auc, HW_DUMMY, 51, "mmrig_watch"), m(am), cycles(0),
        tx_busy(false), sfr(nullptr), bits(nullptr), port_cell{nullptr, nullptr} {}

    int init() override
    {
        cl_hw::init();
        sfr = uc->address_space(MEM_SFR_ID);
        bits = uc->address_space("bits");
        port_cell[0] = register_cell(sfr, P1);
        port_cell[1] = register_cell(sfr, P2);
        for (int i = 0; i < 8; i++) {
            register_cell(bits, P1 + i);
            register_cell(bits, P2 + i);
        }
        return 0;
    }

    // Every write to P1, P2 or one of their bits, before ucsim stores it (val is what it will store).
    void write(cl_memory_cell *cell, t_mem *val) override
    {
        int port;
        uint8_t v;
        t_addr ba;
        if (cell == port_cell[0] || cell == port_cell[1]) {
            port = cell == port_cell[0] ? 1 : 2;
            v = (uint8_t)*val;
        } else if (bits->is_owned(cell, &ba)) {
            port = (ba & 0xF8) == P1 ? 1 : 2;
            v = (uint8_t)port_cell[port - 1]->get();
            uint8_t bit = (uint8_t)(1u << (ba & 7));
            v = *val ? (uint8_t)(v | bit) : (uint8_t)(v & ~bit);
        } else {
            return;
        }
        if (m->port_fn)
            m->port_fn(m->port_ctx, port, cycles * MCS51_CLOCKS_PER_CYCLE, v);
    }

    // Once per machine cycle, after the timers and the UART had theirs.
    int tick(int n) override
    {
        cycles += (uint64_t)n;
        cl_serial *u = m->uart;
        bool busy = u->*uart_access::sending;
        if (tx_busy && !busy && m->tx_fn) {
            // ucsim's UART found its 10 bit times complete at the start of this cycle's tick, before
            // counting this cycle: the stop bit ended with the previous machine cycle.
            m->tx_fn(m->tx_ctx, (cycles - 1) * MCS51_CLOCKS_PER_CYCLE, (uint8_t)(u->*uart_access::out));
        }
        tx_busy = busy;
        feed_rx();
        return 0;
    }

    // The next queued byte onto the line once the receiver has taken the one before (ucsim's receiver
    // starts counting a byte at its next tick after input_avail is set).
    void feed_rx()
    {
        cl_serial *u = m->uart;
        if (m->rx_count == 0 || u->*uart_access::input_avail || u->*uart_access::receiving)
            return;
        uint8_t b = m->rxq[m->rx_head];
        m->rx_head = (m->rx_head + 1) % RXQ;
        m->rx_count--;
        if (!(sfr->get(SCON) & bmREN)) {
            m->rx_lost++;   // the receiver is off: the byte passes unseen
            return;
        }
        u->*uart_access::input = (char)b;
        u->*uart_access::input_avail = true;
    }
};

static bool created;

extern "C" {

mcs51_t *mcs51_create(char *err, unsigned err_len)
{
    if (created) {
        if (err_len)
            snprintf(err, err_len, "one 8051 per process: ucsim keeps its application in a global");
        return nullptr;
    }
    created = true;
    mcs51 *m = new mcs51();
    // What `s51 -t 87C51 -X 11.0592M` does (s51.src/s51.cc), with ucsim's console on /dev/null (its
    // default, stdin, would be put in raw mode and read).
    static char a0[] = "s51", a1[] = "-t", a2[] = "87C51", a3[] = "-X", a4[] = "11.0592M", a5[] = "-c",
                a6[] = "/dev/null";
    static char *argv[] = {a0, a1, a2, a3, a4, a5, a6, nullptr};
    cpus = cpus_51;
    application = m->app = new cl_app();
    m->app->set_name("s51");
    m->app->init(7, argv);
    m->sim = new cl_sim51(m->app);
    if (m->sim->init() || !m->sim->uc) {
        if (err_len)
            snprintf(err, err_len, "ucsim could not make an 87C51");
        return nullptr;
    }
    m->app->set_simulator(m->sim);
    m->uc = m->sim->uc;
    m->sfr = m->uc->address_space(MEM_SFR_ID);
    m->p0 = dynamic_cast<cl_port *>(m->uc->get_hw(HW_PORT, 0, nullptr));
    m->uart = dynamic_cast<cl_serial *>(m->uc->get_hw(HW_UART, 0, nullptr));
    if (!m->p0 || !m->uart) {
        if (err_len)
            snprintf(err, err_len, "ucsim's 87C51 has no P0 or no UART (not the pinned ucsim?)");
        return nullptr;
    }
    // The UART's receiver takes a byte only while it has an input file (cl_serial::tick): give it
    // /dev/null, never read (bytes come from mcs51_uart_rx), and its output the same (bytes go to
    // mcs51_on_tx). Set here rather than with s51's -S, which warns about non-terminal files on stderr.
    m->uart->new_io(mk_io("/dev/null", "r"), mk_io("/dev/null", "w"));
    m->watch = new mm_watch(m->uc, m);
    m->watch->init();
    m->uc->add_hw(m->watch);   // last: ticked after the timers and the UART
    m->error = "";
    return m;
}

// Intel HEX (SDCC's .ihx: data and end records), read here rather than by ucsim's loader, which prints
// to stdout and takes a bad line silently. Code memory is the 87C51's 4 KB... up to 64 KB: ucsim's rom.
long mcs51_load_ihx(mcs51_t *m, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[600];
    long n = 0;
    bool end = false;
    while (!end && fgets(line, sizeof line, f)) {
        size_t len = strcspn(line, "\r\n");
        if (len == 0)
            continue;
        uint8_t rec[260];
        unsigned k = 0, sum = 0;
        if (line[0] != ':' || len % 2 == 0 || len < 11 || (len - 1) / 2 > sizeof rec)
            goto bad;
        for (size_t i = 1; i < len; i += 2) {
            unsigned v;
            if (!isxdigit((unsigned char)line[i]) || !isxdigit((unsigned char)line[i + 1])
                || sscanf(line + i, "%2x", &v) != 1)
                goto bad;
            rec[k++] = (uint8_t)v;
            sum += v;
        }
        if ((sum & 0xFF) != 0 || rec[0] + 5u != k)
            goto bad;
        if (rec[3] == 0x01) {
            end = true;
        } else if (rec[3] == 0x00) {
            unsigned addr = (unsigned)rec[1] << 8 | rec[2];
            for (unsigned i = 0; i < rec[0]; i++)
                m->uc->rom->download((t_addr)((addr + i) & 0xFFFF), rec[4 + i]);
            n += rec[0];
        }  // other record types (segments, start address) do not occur in an 8051 image
    }
    fclose(f);
    if (n == 0)
        return -1;
    mcs51_reset(m);
    return n;
bad:
    fclose(f);
    return -1;
}

void mcs51_reset(mcs51_t *m)
{
    m->uc->reset();   // cl_51core: SFRs by write (P0..P3 0xFF, SCON 0): the hardware sees them
    m->watch->tx_busy = false;
    m->uart->*uart_access::input_avail = false;   // the byte being received is lost
    m->error = "";
}

uint64_t mcs51_clock(const mcs51_t *m)
{
    return m->watch->cycles * MCS51_CLOCKS_PER_CYCLE;
}

// ucsim's reasons to stop (stypes.h: every result above resSTOP stops its simulator). Ours sets no
// breakpoints and no step count, so any of them here means the program went wrong.
static const char *stop_reason(int res)
{
    switch (res) {
    case resHALT: return "halted (a serious error in ucsim)";
    case resINV_ADDR: return "an invalid indirect address";
    case resSTACK_OV: return "stack overflow";
    case resINV_INST: return "an invalid instruction";
    case resBITADDR: return "an uninterpretable bit address";
    case resERROR: return "an error during an instruction";
    case resNOT_DONE: return "an instruction ucsim does not simulate";
    default: return "ucsim stopped the core";
    }
}

int mcs51_step(mcs51_t *m)
{
    uint64_t before = m->watch->cycles;
    if (m->uc->state == stPD) {
        m->error = "the 8051 is in power-down (only a reset ends it)";
        return -1;
    }
    // cl_51core::do_inst: one instruction (in idle mode one machine cycle), then the interrupt it
    // accepts, if any
    int res = m->uc->do_inst(1);
    if (res > resSTOP) {
        m->error = stop_reason(res);
        return -1;
    }
    uint64_t used = m->watch->cycles - before;
    if (used == 0) {
        m->error = "an instruction took no time";
        return -1;
    }
    return (int)(used * MCS51_CLOCKS_PER_CYCLE);
}

int mcs51_run_until(mcs51_t *m, uint64_t until)
{
    m->brk = false;
    while (m->watch->cycles * MCS51_CLOCKS_PER_CYCLE < until) {
        if (mcs51_step(m) < 0)
            return -1;
        if (m->brk)
            return 1;
    }
    return 0;
}

void mcs51_break(mcs51_t *m)
{
    m->brk = true;
}

const char *mcs51_error(const mcs51_t *m)
{
    return m->error;
}

void mcs51_on_port(mcs51_t *m, mcs51_port_fn fn, void *ctx)
{
    m->port_fn = fn;
    m->port_ctx = ctx;
}

void mcs51_on_tx(mcs51_t *m, mcs51_tx_fn fn, void *ctx)
{
    m->tx_fn = fn;
    m->tx_ctx = ctx;
}

void mcs51_set_p0(mcs51_t *m, uint8_t pins)
{
    m->p0->set_pin(pins);
}

int mcs51_uart_rx(mcs51_t *m, uint8_t byte)
{
    if (m->rx_count == RXQ)
        return -1;
    m->rxq[(m->rx_head + m->rx_count) % RXQ] = byte;
    m->rx_count++;
    m->watch->feed_rx();   // starts now if the line is free
    return 0;
}

uint8_t mcs51_sfr(const mcs51_t *m, unsigned addr)
{
    return (uint8_t)m->sfr->get((t_addr)addr);
}

unsigned long mcs51_uart_rx_lost(const mcs51_t *m)
{
    return m->rx_lost;
}

}  // extern "C"
