/* The command line's vocabulary (cli/vocab.c): every option more than one command takes, once,
 * with what it means, its value's name, its default, the values it accepts and the commands that
 * take it, and where one command's default or value differs, that command's and why. The
 * parsers bind these options through it (ffn_cli_bind_word*: the accepted range comes from
 * here), the help texts print their entries from it (ffn_cli_help_word), docs/cli.md's
 * vocabulary table is its rendering (ffn_cli_vocab_markdown; `ffnroof help options`), and
 * tests/test_cli_vocab.c walks it against every command. */
#ifndef FFN_CLI_VOCAB_H
#define FFN_CLI_VOCAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum ffn_word_kind {
    FFN_WORD_TEXT = 0, /* a name, a file, a keyword: the command reads it */
    FFN_WORD_FLAG,     /* no value */
    FFN_WORD_COUNT,    /* whole numbers in [lo, hi]; a list where the command's arg says so */
    FFN_WORD_NUMBER    /* a number in [lo, hi] */
} ffn_word_kind;

/* One command's difference: its value's name (a list where others take one), its default and
 * what it adds to the meaning; NULL fields are the word's own. */
typedef struct ffn_word_for {
    const char *cmd;
    const char *arg;
    const char *dflt;
    const char *note;
    size_t cap; /* values at most in a list there; 0: the word's */
} ffn_word_for;

#define FFN_WORD_MAX_FOR 8

typedef struct ffn_cli_word {
    int opt;             /* enum ffn_opt */
    int alias;           /* the same option under another name, or 0 */
    const char *arg;     /* its value's name in --help (N, LIST, D, ...); NULL for a flag */
    ffn_word_kind kind;  /* what the value is */
    const char *meaning; /* what it means, units included */
    const char *dflt;    /* its default, or NULL (required, or none) */
    double lo, hi;       /* COUNT, NUMBER: the values accepted */
    size_t cap;          /* COUNT taken as a list: values at most */
    const char *cmds;    /* the commands that take it, space-separated, in the order of main's */
    ffn_word_for per[FFN_WORD_MAX_FOR];
} ffn_cli_word;

/* The vocabulary: its n entries in docs order. */
const ffn_cli_word *ffn_cli_words(size_t *n);
/* The entry of option opt (or of the option it is the alias of), or NULL. */
const ffn_cli_word *ffn_cli_word_of(int opt);
/* Whether cmd takes w; cmd's value name, default, note and list cap (the word's where cmd has
 * none of its own). */
bool ffn_cli_word_takes(const ffn_cli_word *w, const char *cmd);
const char *ffn_cli_word_arg(const ffn_cli_word *w, const char *cmd);
const char *ffn_cli_word_default(const ffn_cli_word *w, const char *cmd);
const char *ffn_cli_word_note(const ffn_cli_word *w, const char *cmd);
size_t ffn_cli_word_cap(const ffn_cli_word *w, const char *cmd);

/* cmd's --help entry of option opt ("  --tp N   meaning (default: 1; 1-4096)", wrapped at 80
 * columns), into buf; the length it needed. */
size_t ffn_cli_word_help(const char *cmd, int opt, char *buf, size_t n);
/* Print cmd's entries of the options in opts (0-terminated) on fp. */
void ffn_cli_help_words(FILE *fp, const char *cmd, const int *opts);
/* The vocabulary as docs/cli.md's Markdown table. */
void ffn_cli_vocab_markdown(FILE *fp);

#endif
