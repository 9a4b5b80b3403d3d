/* Timed actions (actions.h): a small table; the commands leave a handful at most. */
#include "actions.h"

#define MAX_ACTIONS 64

static struct {
    struct action {
        uint64_t at;
        action_fn fn;
        int arg;
    } a[MAX_ACTIONS];
    int n;
} actions;

int actions_add(uint64_t at, action_fn fn, int arg)
{
    if (actions.n == MAX_ACTIONS)
        return -1;
    actions.a[actions.n++] = (struct action){at, fn, arg};
    return 0;
}

uint64_t actions_next(void)
{
    uint64_t t = NEVER;
    int i;
    for (i = 0; i < actions.n; i++)
        if (actions.a[i].at < t)
            t = actions.a[i].at;
    return t;
}

/* An action may add others (or run the bench's parts that do): the scan starts again after each. */
void actions_run(uint64_t now)
{
    int i = 0;
    while (i < actions.n) {
        if (actions.a[i].at <= now) {
            struct action a = actions.a[i];
            actions.a[i] = actions.a[--actions.n];
            a.fn(a.arg, now);
            i = 0;
        } else {
            i++;
        }
    }
}
