#include "ex_list.h"

void ex_list_init(struct ex_list *l)
{
    l->n = 0;
}

uint8_t ex_list_insert(struct ex_list *l, uint16_t tag, uint8_t id, uint32_t tc, uint32_t now)
{
    uint32_t key = tc - now;
    uint8_t i, pos;

    if (key == 0 || key > 0x7FFFFFFFul)
        return EX_LIST_PAST_DUE;
    if (key > EX_LIST_HORIZON_TICKS)
        return EX_LIST_HORIZON;
    for (i = 0; i < l->n; i++)
        if (l->e[i].tag == tag)
            return EX_LIST_DUPLICATE;
    if (l->n >= EX_LIST_CAPACITY)
        return EX_LIST_FULL;
    pos = l->n;
    while (pos > 0 && (uint32_t)(l->e[pos - 1].tc - now) > key) {
        l->e[pos] = l->e[pos - 1];
        pos--;
    }
    l->e[pos].tc = tc;
    l->e[pos].tag = tag;
    l->e[pos].id = id;
    l->n++;
    return EX_LIST_OK;
}

uint8_t ex_list_due(const struct ex_list *l, uint32_t now)
{
    uint8_t k = 0;

    while (k < l->n && (int32_t)(l->e[k].tc - now) <= 0)
        k++;
    return k;
}

void ex_list_pop(struct ex_list *l, uint8_t k)
{
    uint8_t i;

    if (k > l->n)
        k = l->n;
    for (i = k; i < l->n; i++)
        l->e[i - k] = l->e[i];
    l->n = (uint8_t)(l->n - k);
}

uint8_t ex_list_remove(struct ex_list *l, uint16_t tag)
{
    uint8_t i;

    for (i = 0; i < l->n; i++) {
        if (l->e[i].tag == tag) {
            for (; i + 1u < l->n; i++)
                l->e[i] = l->e[i + 1u];
            l->n--;
            return 1;
        }
    }
    return 0;
}
