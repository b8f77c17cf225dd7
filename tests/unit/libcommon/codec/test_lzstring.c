/*
 * test_lzstring.c - lz64 (lz-string compressToBase64 / decompressFromBase64).
 *
 * The vectors were produced by the npm package lz-string 1.5.0 under node:
 * compressToBase64(s) for each string s. `in` is s as UTF-8; for the lone
 * surrogate vector that is what decompression must give (U+FFFD for each
 * lone surrogate), and compression cannot reproduce the original.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cm/err.h"
#include "cm/lzstring.h"

typedef struct {
    const char *name;
    int roundtrip; /* compress(in) must equal lz */
    size_t len;    /* bytes of in (it may hold a NUL) */
    const char *in;
    const char *lz;
} vector_t;

static const vector_t vectors[] = {
    {"empty", 1, 0, "", "Q==="},
    {"one_char", 1, 1, "a", "IZA="},
    {"ascii", 1, 58, "Hello, World! The quick brown fox jumps over the lazy dog.",
     "BIUwNmD2A0AEDqkBOYAmBCWAVAFiWAjgK4CWAxgNawBGSkA7gHawBmkAHrAFZEC2ADgG"
     "dYkAG4gksAC55YYAIYAvAJ6xUkAOYA6IA==="},
    {"latin1", 1, 23,
     "caf\xc3\xa9 na\xc3\xafve \xc3\xbc"
     "ber \xc2\xa9\xc2\xae",
     "MYQwZglwBAdiD3A3AplAPwI2QJygSoDqg==="},
    {"cjk", 1, 32,
     "\xe4\xb8\xad\xe6\x96\x87\xe6\xb5\x8b\xe8\xaf\x95 \xe6\x97\xa5\xe6\x9c"
     "\xac\xe8\xaa\x9e \xed\x95\x9c\xea\xb5\xad\xec\x96\xb4",
     "rRynDTTStoq9EASKemg05oPKiqB1VwtrWBbRoA=="},
    {"emoji", 1, 39,
     "emoji \xf0\x9f\x98\x80\xf0\x9f\x8e\x89\xf0\x9f\x91\x8d astral \xf0\x90"
     "\x80\x80 \xf4\x8f\xbf\xbf end",
     "KYWw9gVglgBIvBuAA9wPBuEj9uhZHZgQwM4BcAnLAGxkAANwAB2ZB/7cH/9mYAOwBMg="},
    {"repeated", 1, 1800,
     "abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcab"
     "cabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabca"
     "bcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc"
     "abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcab"
     "cabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabca"
     "bcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc"
     "abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcab"
     "cabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabca"
     "bcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc"
     "abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcab"
     "cabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabca"
     "bcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc"
     "abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcab"
     "cabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabca"
     "bcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc"
     "abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcab"
     "cabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabca"
     "bcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc"
     "abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcab"
     "cabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabca"
     "bcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc"
     "abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcab"
     "cabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabca"
     "bcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc"
     "abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcab"
     "cabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabca"
     "bcabcabcabcabcabcabcabcabcabcabc",
     "IYIwxqHpPXUNo+TUvczase33BOR+xhJ5Zlp1FNVtD9TdLjrzbnH37vXfPfkMEiBY4eNE"
     "TpU2ZPkyFcxSuVqlG1ZvVbdO/dsN6jB42dMWTV2kA==="},
    {"runs", 1, 2000,
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaabbbbbbbbbbbbbbbbbbbb"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
     "bbbbbbbbbbbbbbbbbbbbbbbbbbbb",
     "IY18ZXTt/DFOS1b0c17Pd/wYUcSaWeRZVdTbXTAEZPMutvsedfc+9/8DBQ4SNFjxEyVO"
     "kzZc+QsVLlK1WvUbNW7Tq5A="},
    {"json_event", 1, 81,
     "{\"event\":\"$pageview\",\"distinct_id\":\"abc\",\"properties\":{\"x"
     "\":\"\xc3\xa9\xf0\x9f\x98\x80\",\"y\":[1,2,3]}}",
     "N4IgpgbmB2AuIC4QBIAOBDA5pAlmA7iADQgAmOAzrDtAMawD6OpiI6ARrcSKgE4D2qML"
     "2pgKiUAA9WAS8C8G4AA97gE9EAbQCMRAExEAzAF0AvkaA==="},
    {"control", 1, 22, "nul\x00tab\x09nl\x0a\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf",
     "HYVwNgAALghgRgSGGAUAfwAGH/wQABCH//oA"},
    {"lone_surrogate", 0, 9, "x\xef\xbf\xbdy\xef\xbf\xbdz", "B6AA2J6AA7BeQ==="},
    {"batch_5k", 1, 5201,
     "{\"api_key\":\"phc_test\",\"batch\":[{\"event\":\"$autocapture\",\"d"
     "istinct_id\":\"user-0\",\"uuid\":\"0190a1b2-c3d4-7e5f-8a9b-100000000"
     "000\",\"timestamp\":\"2024-06-01T12:10:00.000Z\",\"properties\":{\"$"
     "current_url\":\"https://example.com/p/0\",\"$browser\":\"Firefox\",\""
     "$lib\":\"web\",\"$lib_version\":\"1.449.2\",\"token\":\"phc_test\",\""
     "n\":0}},{\"event\":\"$pageview\",\"distinct_id\":\"user-1\",\"uuid\""
     ":\"0190a1b2-c3d4-7e5f-8a9b-100000007919\",\"timestamp\":\"2024-06-02"
     "T12:11:00.000Z\",\"properties\":{\"$current_url\":\"https://example."
     "com/p/1\",\"$browser\":\"Firefox\",\"$lib\":\"web\",\"$lib_version\""
     ":\"1.449.2\",\"token\":\"phc_test\",\"n\":1}},{\"event\":\"$pageview"
     "\",\"distinct_id\":\"user-2\",\"uuid\":\"0190a1b2-c3d4-7e5f-8a9b-100"
     "000015838\",\"timestamp\":\"2024-06-03T12:12:00.000Z\",\"properties\""
     ":{\"$current_url\":\"https://example.com/p/2\",\"$browser\":\"Firefo"
     "x\",\"$lib\":\"web\",\"$lib_version\":\"1.449.2\",\"token\":\"phc_te"
     "st\",\"n\":2}},{\"event\":\"$autocapture\",\"distinct_id\":\"user-3\""
     ",\"uuid\":\"0190a1b2-c3d4-7e5f-8a9b-100000023757\",\"timestamp\":\"2"
     "024-06-04T12:13:00.000Z\",\"properties\":{\"$current_url\":\"https:/"
     "/example.com/p/3\",\"$browser\":\"Firefox\",\"$lib\":\"web\",\"$lib_"
     "version\":\"1.449.2\",\"token\":\"phc_test\",\"n\":3}},{\"event\":\""
     "$pageview\",\"distinct_id\":\"user-0\",\"uuid\":\"0190a1b2-c3d4-7e5f"
     "-8a9b-100000031676\",\"timestamp\":\"2024-06-05T12:14:00.000Z\",\"pr"
     "operties\":{\"$current_url\":\"https://example.com/p/4\",\"$browser\""
     ":\"Firefox\",\"$lib\":\"web\",\"$lib_version\":\"1.449.2\",\"token\""
     ":\"phc_test\",\"n\":4}},{\"event\":\"$pageview\",\"distinct_id\":\"u"
     "ser-1\",\"uuid\":\"0190a1b2-c3d4-7e5f-8a9b-100000039595\",\"timestam"
     "p\":\"2024-06-06T12:15:00.000Z\",\"properties\":{\"$current_url\":\""
     "https://example.com/p/5\",\"$browser\":\"Firefox\",\"$lib\":\"web\","
     "\"$lib_version\":\"1.449.2\",\"token\":\"phc_test\",\"n\":5}},{\"eve"
     "nt\":\"$autocapture\",\"distinct_id\":\"user-2\",\"uuid\":\"0190a1b2"
     "-c3d4-7e5f-8a9b-100000047514\",\"timestamp\":\"2024-06-07T12:16:00.0"
     "00Z\",\"properties\":{\"$current_url\":\"https://example.com/p/6\",\""
     "$browser\":\"Firefox\",\"$lib\":\"web\",\"$lib_version\":\"1.449.2\""
     ",\"token\":\"phc_test\",\"n\":6}},{\"event\":\"$pageview\",\"distinc"
     "t_id\":\"user-3\",\"uuid\":\"0190a1b2-c3d4-7e5f-8a9b-100000055433\","
     "\"timestamp\":\"2024-06-08T12:17:00.000Z\",\"properties\":{\"$curren"
     "t_url\":\"https://example.com/p/7\",\"$browser\":\"Firefox\",\"$lib\""
     ":\"web\",\"$lib_version\":\"1.449.2\",\"token\":\"phc_test\",\"n\":7"
     "}},{\"event\":\"$pageview\",\"distinct_id\":\"user-0\",\"uuid\":\"01"
     "90a1b2-c3d4-7e5f-8a9b-100000063352\",\"timestamp\":\"2024-06-09T12:1"
     "8:00.000Z\",\"properties\":{\"$current_url\":\"https://example.com/p"
     "/8\",\"$browser\":\"Firefox\",\"$lib\":\"web\",\"$lib_version\":\"1."
     "449.2\",\"token\":\"phc_test\",\"n\":8}},{\"event\":\"$autocapture\""
     ",\"distinct_id\":\"user-1\",\"uuid\":\"0190a1b2-c3d4-7e5f-8a9b-10000"
     "0071271\",\"timestamp\":\"2024-06-01T12:19:00.000Z\",\"properties\":"
     "{\"$current_url\":\"https://example.com/p/9\",\"$browser\":\"Firefox"
     "\",\"$lib\":\"web\",\"$lib_version\":\"1.449.2\",\"token\":\"phc_tes"
     "t\",\"n\":9}},{\"event\":\"$pageview\",\"distinct_id\":\"user-2\",\""
     "uuid\":\"0190a1b2-c3d4-7e5f-8a9b-100000079190\",\"timestamp\":\"2024"
     "-06-02T12:20:00.000Z\",\"properties\":{\"$current_url\":\"https://ex"
     "ample.com/p/10\",\"$browser\":\"Firefox\",\"$lib\":\"web\",\"$lib_ve"
     "rsion\":\"1.449.2\",\"token\":\"phc_test\",\"n\":10}},{\"event\":\"$"
     "pageview\",\"distinct_id\":\"user-3\",\"uuid\":\"0190a1b2-c3d4-7e5f-"
     "8a9b-100000087109\",\"timestamp\":\"2024-06-03T12:21:00.000Z\",\"pro"
     "perties\":{\"$current_url\":\"https://example.com/p/11\",\"$browser\""
     ":\"Firefox\",\"$lib\":\"web\",\"$lib_version\":\"1.449.2\",\"token\""
     ":\"phc_test\",\"n\":11}},{\"event\":\"$autocapture\",\"distinct_id\""
     ":\"user-0\",\"uuid\":\"0190a1b2-c3d4-7e5f-8a9b-100000095028\",\"time"
     "stamp\":\"2024-06-04T12:22:00.000Z\",\"properties\":{\"$current_url\""
     ":\"https://example.com/p/12\",\"$browser\":\"Firefox\",\"$lib\":\"we"
     "b\",\"$lib_version\":\"1.449.2\",\"token\":\"phc_test\",\"n\":12}},{"
     "\"event\":\"$pageview\",\"distinct_id\":\"user-1\",\"uuid\":\"0190a1"
     "b2-c3d4-7e5f-8a9b-100000102947\",\"timestamp\":\"2024-06-05T12:23:00"
     ".000Z\",\"properties\":{\"$current_url\":\"https://example.com/p/13\""
     ",\"$browser\":\"Firefox\",\"$lib\":\"web\",\"$lib_version\":\"1.449."
     "2\",\"token\":\"phc_test\",\"n\":13}},{\"event\":\"$pageview\",\"dis"
     "tinct_id\":\"user-2\",\"uuid\":\"0190a1b2-c3d4-7e5f-8a9b-10000011086"
     "6\",\"timestamp\":\"2024-06-06T12:24:00.000Z\",\"properties\":{\"$cu"
     "rrent_url\":\"https://example.com/p/14\",\"$browser\":\"Firefox\",\""
     "$lib\":\"web\",\"$lib_version\":\"1.449.2\",\"token\":\"phc_test\",\""
     "n\":14}},{\"event\":\"$autocapture\",\"distinct_id\":\"user-3\",\"uu"
     "id\":\"0190a1b2-c3d4-7e5f-8a9b-100000118785\",\"timestamp\":\"2024-0"
     "6-07T12:25:00.000Z\",\"properties\":{\"$current_url\":\"https://exam"
     "ple.com/p/15\",\"$browser\":\"Firefox\",\"$lib\":\"web\",\"$lib_vers"
     "ion\":\"1.449.2\",\"token\":\"phc_test\",\"n\":15}},{\"event\":\"$pa"
     "geview\",\"distinct_id\":\"user-0\",\"uuid\":\"0190a1b2-c3d4-7e5f-8a"
     "9b-100000126704\",\"timestamp\":\"2024-06-08T12:26:00.000Z\",\"prope"
     "rties\":{\"$current_url\":\"https://example.com/p/16\",\"$browser\":"
     "\"Firefox\",\"$lib\":\"web\",\"$lib_version\":\"1.449.2\",\"token\":"
     "\"phc_test\",\"n\":16}},{\"event\":\"$pageview\",\"distinct_id\":\"u"
     "ser-1\",\"uuid\":\"0190a1b2-c3d4-7e5f-8a9b-100000134623\",\"timestam"
     "p\":\"2024-06-09T12:27:00.000Z\",\"properties\":{\"$current_url\":\""
     "https://example.com/p/17\",\"$browser\":\"Firefox\",\"$lib\":\"web\""
     ",\"$lib_version\":\"1.449.2\",\"token\":\"phc_test\",\"n\":17}},{\"e"
     "vent\":\"$autocapture\",\"distinct_id\":\"user-2\",\"uuid\":\"0190a1"
     "b2-c3d4-7e5f-8a9b-100000142542\",\"timestamp\":\"2024-06-01T12:28:00"
     ".000Z\",\"properties\":{\"$current_url\":\"https://example.com/p/18\""
     ",\"$browser\":\"Firefox\",\"$lib\":\"web\",\"$lib_version\":\"1.449."
     "2\",\"token\":\"phc_test\",\"n\":18}}]}",
     "N4IghgDglg+g1gUwJ4gFwggCwMYwC4IDOeIANCAEZh7aZoDaoCAbggHYnoAkYArngHts"
     "kPLwBOCMiAAmUYlDbY8MKNLQhehBGIC0ABim9eq9XoCMATj1gzFAEw7sAZmkAWHQHYEA"
     "VgBmOgA4wCwodMz0IyKiDcjwoAFsiPDB4iHU7PTt3PQA2fTMAFTM7VHDUCIA6SIAtKQg"
     "xAQhtOKI0UC5scQkOGHEAG3VMPDwIQlQAenGEAA8UiD6ECuwBePGIcZiQLgoGgHctMXU"
     "AMSgJXwFpqS4+qAp1XYQ78mvbmFYxQigBNnUzCtdXBYKnYpIJED90FhcARiFIIXoAL4I"
     "0hMVgcdRcCBgADmLCgCF2Ulk8kUyhM6E02jChmManQ5isNnsjhc7i8fkCwVC4Wieg8Fk"
     "soISSTm6Uy2TymSKJTMZnKeiqEVq5HqjWa+MIbS2nTE3WU/UGw1GEyms1SCyWKzW4zMV"
     "x2An22mOpwQ50uzxud3QDyeW09b20n2+v3+gOBoIE4PUUPwSThaDMSJRIBY7E4WyxuOY"
     "+MJ5GJcVJKjpGgOOhB5CM5JADOstgczjcnh8/iCITCvLM3gCTgCQsSxFF6AyWX0kqc0t"
     "KJUqNTqDSaYhamtQ7R1et6YgG6CGIzGkxmcwty1W63LW3tjsO6BOZwuV0990ed9e7yDE"
     "JAfwBQNPYPY0ZwsdhcgITsJNUTTDE+EEYQIFECQiTkAslCLdRKV0JwaSrGsmXrVkmw5V"
     "tuV5OwnA8bwPD7EVUjFEdcn0VwJzMJx5UVPRlQwOd1VaZdtS6NN103EBt2NPczXmRYj2"
     "tdDnnPA5nRvd0/VuB9fReCgAw+L43w/MNv0jX9IX/GESCAtAnFAlM0XTTEcTxAl4JJJC"
     "q1Q/QMOLLC6xZRt2RbLl22iJwzByDwcgogcqKHcVR30bwGNcZiZxVDiFw1LUOl4noDS3"
     "I1d1NA9xKtdZXDtPZZKvF03SfL0QB9Sr1NfENP3DWI9LfGMjPjVBXHM1N0W4TNbNzGQE"
     "IURzi2c20K1pUxLFrZkGzZZtOTbHkoicCxvHW0LknCkBhwlUcGO8eKlVnNVkq4ld0v1D"
     "dDR3E193NfLj3GbxiodUqQGvV1bw9JTvUfX61JfTSGp0iMowM6E4xM1BvG6yyIP4IQRH"
     "ESQ82GwsnNLU9KzcmbsM8hb8N8lbIlcUizCK2JhTCtIIpoyUPAYnJjtY0750XVLVz4zL"
     "BOy+7RMPArxhC6SSqdMr5Mq5TauB4N0G0r9wf0jBDOhkAIRyeHwL6mzszs9GHLJMbSyk"
     "jQpvpfGPPmvCfOW3lvG8VwnDNuJ+22undsi2i9ACBiPFZtjVQ5lLuLS3UeZurK7pEvLL"
     "We8ixfeiXPvKn7FKqmrAbqkGFdDJXmoh1WocAjW0A8bXeozPWc3sxDjZQ0tNlx6bGWt3"
     "DvKWwjohyF3vG/GmPeo/a9AsBiAkD9nOKXS6I4yqO+Zj3LHvj61eyTi85O+hTVJl7O5a"
     "0/OmpAH9WrV0uIQCSurMg5GYNRuuRobilSwm83MKtuaO8Wgi/KiDxigAK2oOL2DN8gMQ"
     "sJPRKZ1OZh25vPASQkcoPTEqvdYFg3qb0ltvaW/0VL+gPqDAuJ8Wp/hLsZMuqALDXwxP"
     "1fWg18xP2Qi/KkOMLbVk/jhLyP8Sa8n5DNYBO09pRSlMUVAGQoHsRgaHWea5eZIIFnHC"
     "S6xwiYI+l9CqgM94ZxzvLd8R9dJFzaurCE4QaG6yzLXQ29dmElipGbFuls25f24cTe20"
     "QAgANHoIz2wifbjjEXYOU04TrQJDhdHic9rqIP5rHFeyibRv22OLS8qcpZaLwbLQMud9"
     "GNUMSrYxF8EyJmRGBKuPAkbQVgmjIaRtbHOWbuw9yLiiZ227lEdamR14n0HiAvxkp6KB"
     "KnAqBKUjwkz0iXIheCi4moIScUNRKcNHp13pk/e2S9GK2PqfMhAEKGmJAqUiyOtq6WIN"
     "rUmxWMqRv0cRw5xXDWldz/hEcIdgLDkx8cPERMVAlMRCWzMJ08uZXX4rdYSy85nC0Yos"
     "1Jyyd73jWTowhec8nKzPuQjqjFzGnIGo/TGJtWGuVbrNB5tsnmk3MOEAIORRY9Pdn072"
     "kocgTiyJI4OQK4EgvkbEiFQtnqUxhVvTRGdtGqV0YfVFhcCnn32QmLqRyeo30qSjOC1i"
     "mFXLQkSpxJLCZkt/hS2UniAivWpvSoRjL9BM0CUdf5QckqwNkZHGJS8UF8utJ2QV2DhW"
     "rOqgDJFGyJVgyleivZmK4YKoRhY3Far8WNypI0j+9zdWd31dEYoQU9BUzpZRXxFrfYsp"
     "Zraqe50Jnhymc68Frqnrutpck5OsK07wr+r6/Bz4A1EO2aQyGoaYaBWxdZM5DCMajTjb"
     "oG5TTOHJp4e4yIjFXA5GIp8+mI8x6BIDkWwFJbgVRNBdHStgtq0qMTmeFJQqVkIpbVkj"
     "SmyDFot2e1XtFcI0nIqVBFVNTGGxpYboNhiadU2xTbwqIlM7BOwHma3NYDzAsonhusZH"
     "LHUILBcgg9aCbTdLrVgtJOCMmXvWdewNxCdndofZQswV8EQAF0ERAA=="},
};

static void test_npm_vectors_decompress(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        const vector_t *v = &vectors[i];
        cm_buf_t out = CM_BUF_INIT;
        int rc = cm_lz64_decompress(v->lz, strlen(v->lz), 1 << 20, &out);
        if (rc != CM_OK || out.len != v->len || (v->len && memcmp(out.p, v->in, v->len) != 0))
            fail_msg("vector %s: rc %d len %zu", v->name, rc, out.len);
        cm_buf_free(&out);
    }
}

static void test_npm_vectors_compress(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        const vector_t *v = &vectors[i];
        if (!v->roundtrip)
            continue;
        cm_buf_t out = CM_BUF_INIT;
        assert_int_equal(cm_lz64_compress(v->in, v->len, &out), CM_OK);
        if (out.len != strlen(v->lz) || memcmp(out.p, v->lz, out.len) != 0)
            fail_msg("vector %s: got %.*s", v->name, (int)out.len, out.p);
        cm_buf_free(&out);
    }
}

/* Packs codes the way the format does, to build streams by hand. */
typedef struct {
    char s[256];
    size_t n;
    unsigned acc, nacc;
} craft_t;

static void craft(craft_t *c, uint32_t v, unsigned width)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (unsigned k = 0; k < width; k++) {
        c->acc = c->acc << 1 | ((v >> k) & 1);
        if (++c->nacc == 6) {
            c->s[c->n++] = abc[c->acc];
            c->acc = c->nacc = 0;
        }
    }
}

static const char *craft_end(craft_t *c)
{
    if (c->nacc)
        craft(c, 0, 6 - c->nacc);
    c->s[c->n] = '\0';
    return c->s;
}

static int decode_cstr(const char *s, size_t max_out, cm_buf_t *out)
{
    return cm_lz64_decompress(s, strlen(s), max_out, out);
}

static void test_crafted_streams(void **state)
{
    (void)state;
    cm_buf_t out = CM_BUF_INIT;

    /* literal 'a', then code 4 = the entry being defined ("aa"), end. */
    craft_t c = {0};
    craft(&c, 0, 2), craft(&c, 'a', 8), craft(&c, 4, 3), craft(&c, 2, 3);
    assert_int_equal(decode_cstr(craft_end(&c), 100, &out), CM_OK);
    assert_int_equal(out.len, 3);
    assert_memory_equal(out.p, "aaa", 3);

    /* A code past the one being defined. */
    c = (craft_t){0};
    craft(&c, 0, 2), craft(&c, 'a', 8), craft(&c, 5, 3), craft(&c, 2, 3);
    out.len = 0;
    assert_int_equal(decode_cstr(craft_end(&c), 100, &out), CM_EINVAL);
    assert_int_equal(out.len, 0);

    /* First code 3: there is no dictionary yet. */
    c = (craft_t){0};
    craft(&c, 3, 2), craft(&c, 2, 3);
    assert_int_equal(decode_cstr(craft_end(&c), 100, &out), CM_EINVAL);

    /* No end marker: the zero padding reads as a literal that runs out. */
    c = (craft_t){0};
    craft(&c, 0, 2), craft(&c, 'a', 8);
    assert_int_equal(decode_cstr(craft_end(&c), 100, &out), CM_EINVAL);

    /* 16-bit literals: a surrogate pair, then a lone low surrogate. */
    c = (craft_t){0};
    craft(&c, 1, 2), craft(&c, 0xd83d, 16), craft(&c, 1, 3), craft(&c, 0xde00, 16);
    craft(&c, 1, 3), craft(&c, 0xdc00, 16), craft(&c, 2, 4);
    out.len = 0;
    assert_int_equal(decode_cstr(craft_end(&c), 100, &out), CM_OK);
    assert_int_equal(out.len, 7);
    assert_memory_equal(out.p, "\xf0\x9f\x98\x80\xef\xbf\xbd", 7);
    cm_buf_free(&out);
}

static void test_bad_text(void **state)
{
    (void)state;
    cm_buf_t out = CM_BUF_INIT;
    assert_int_equal(decode_cstr("", 100, &out), CM_EINVAL);
    assert_int_equal(decode_cstr("IZA!", 100, &out), CM_EINVAL);
    assert_int_equal(decode_cstr("IZ-A", 100, &out), CM_EINVAL);
    assert_int_equal(decode_cstr("IZ=A", 100, &out), CM_EINVAL);
    assert_int_equal(decode_cstr("IZA====", 100, &out), CM_EINVAL);
    assert_int_equal(decode_cstr("====", 100, &out), CM_EINVAL);
    assert_int_equal(cm_lz64_decompress("IZA=\0", 5, 100, &out), CM_EINVAL);
    assert_int_equal(out.len, 0);
    /* Padding is optional; what follows the end marker is ignored. */
    assert_int_equal(decode_cstr("IZA", 100, &out), CM_OK);
    assert_int_equal(decode_cstr("IZAAAAA", 100, &out), CM_OK);
    assert_int_equal(out.len, 2);
    assert_memory_equal(out.p, "aa", 2);
    /* Truncating a real stream loses its end marker. */
    const char *lz = vectors[2].lz;
    assert_int_equal(cm_lz64_decompress(lz, strlen(lz) / 2, 1000, &out), CM_EINVAL);
    assert_int_equal(out.len, 2);
    cm_buf_free(&out);
}

static void test_limits(void **state)
{
    (void)state;
    cm_buf_t out = CM_BUF_INIT;
    cm_buf_append(&out, "keep", 4);
    assert_int_equal(decode_cstr("BYUwNmD2Q===", 4, &out), CM_ETOOBIG); /* "hello" */
    assert_int_equal(out.len, 4);
    assert_int_equal(decode_cstr("BYUwNmD2Q===", 5, &out), CM_OK);
    assert_int_equal(out.len, 9);
    assert_memory_equal(out.p, "keephello", 9);
    /* The limit is on UTF-8 bytes, not code units. */
    const vector_t *emoji = &vectors[5];
    out.len = 0;
    assert_int_equal(decode_cstr(emoji->lz, emoji->len - 1, &out), CM_ETOOBIG);
    assert_int_equal(decode_cstr(emoji->lz, emoji->len, &out), CM_OK);
    assert_int_equal(out.len, emoji->len);
    /* The empty string needs no room at all. */
    out.len = 0;
    assert_int_equal(decode_cstr("Q===", 0, &out), CM_OK);
    assert_int_equal(out.len, 0);
    cm_buf_free(&out);
}

static void test_bomb(void **state)
{
    (void)state;
    /* A run of one unit makes phrases 1, 2, 3... long: 8 MiB of 'a' takes
     * about 4100 codes, a few KB of text. */
    size_t n = (size_t)8 << 20;
    char *big = malloc(n);
    memset(big, 'a', n);
    cm_buf_t lz = CM_BUF_INIT, out = CM_BUF_INIT;
    assert_int_equal(cm_lz64_compress(big, n, &lz), CM_OK);
    assert_true(lz.len < 16 * 1024);
    clock_t t0 = clock();
    assert_int_equal(cm_lz64_decompress(lz.p, lz.len, 1 << 20, &out), CM_ETOOBIG);
    assert_int_equal(out.len, 0);
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
    assert_int_equal(cm_lz64_decompress(lz.p, lz.len, n, &out), CM_OK);
    assert_int_equal(out.len, n);
    assert_memory_equal(out.p, big, n);
    free(big);
    cm_buf_free(&lz);
    cm_buf_free(&out);
}

/* Appends code point cp as UTF-8. */
static void put_cp(cm_buf_t *b, uint32_t cp)
{
    if (cp < 0x80) {
        cm_buf_putc(b, (char)cp);
    } else if (cp < 0x800) {
        cm_buf_putc(b, (char)(0xc0 | cp >> 6));
        cm_buf_putc(b, (char)(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        cm_buf_putc(b, (char)(0xe0 | cp >> 12));
        cm_buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
        cm_buf_putc(b, (char)(0x80 | (cp & 0x3f)));
    } else {
        cm_buf_putc(b, (char)(0xf0 | cp >> 18));
        cm_buf_putc(b, (char)(0x80 | ((cp >> 12) & 0x3f)));
        cm_buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
        cm_buf_putc(b, (char)(0x80 | (cp & 0x3f)));
    }
}

static void test_random_roundtrip(void **state)
{
    (void)state;
    srand(12345);
    for (int round = 0; round < 200; round++) {
        cm_buf_t text = CM_BUF_INIT, lz = CM_BUF_INIT, back = CM_BUF_INIT;
        int len = rand() % 2000, alphabet = 1 + rand() % 6;
        for (int i = 0; i < len; i++) {
            uint32_t cp;
            switch (rand() % alphabet) {
            case 0: cp = 'a' + (uint32_t)(rand() % 3); break;
            case 1: cp = (uint32_t)(rand() % 0x80); break;
            case 2: cp = 0x80 + (uint32_t)(rand() % 0x780); break;
            case 3: cp = 0xe000 + (uint32_t)(rand() % 0x2000); break;
            case 4: cp = 0x10000 + (uint32_t)(rand() % 0x100000); break;
            default: cp = 0x4e00 + (uint32_t)(rand() % 64); break;
            }
            put_cp(&text, cp);
        }
        assert_int_equal(cm_lz64_compress(text.p, text.len, &lz), CM_OK);
        assert_int_equal(lz.len % 4, 0);
        assert_int_equal(cm_lz64_decompress(lz.p, lz.len, text.len, &back), CM_OK);
        assert_int_equal(back.len, text.len);
        if (text.len)
            assert_memory_equal(back.p, text.p, text.len);
        cm_buf_free(&text);
        cm_buf_free(&lz);
        cm_buf_free(&back);
    }
}

static void test_compress_rejects_bad_utf8(void **state)
{
    (void)state;
    static const char *bad[] = {"\x80", "a\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                "\xf8"};
    cm_buf_t out = CM_BUF_INIT;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(cm_lz64_compress(bad[i], strlen(bad[i]), &out), CM_EINVAL);
    assert_int_equal(out.len, 0);
    cm_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_npm_vectors_decompress),
        cmocka_unit_test(test_npm_vectors_compress),
        cmocka_unit_test(test_crafted_streams),
        cmocka_unit_test(test_bad_text),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_bomb),
        cmocka_unit_test(test_random_roundtrip),
        cmocka_unit_test(test_compress_rejects_bad_utf8),
    };
    return cmocka_run_group_tests_name("lzstring", tests, NULL, NULL);
}
