/*
 * ucase.c - see cm/ucase.h: ICU's simple case mappings (ICU is codec's).
 */
#include "cm/ucase.h"

#include <unicode/uchar.h>

uint32_t cm_ucase_simple(uint32_t cp, bool upper)
{
    if (cp > 0x10FFFF)
        return cp;
    UChar32 to = upper ? u_toupper((UChar32)cp) : u_tolower((UChar32)cp);
    return to < 0 ? cp : (uint32_t)to;
}
