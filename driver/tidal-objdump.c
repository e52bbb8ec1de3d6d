/* tidal-objdump — which kernels of a binary carry the tidal rewrite.
 *
 * Reads a cubin, a fatbin, a host object/executable/shared library (its
 * .nv_fatbin and __nv_relfatbin sections) or a PTX file; lists each embedded
 * cubin and PTX image with its kernels, says which are rewritten (the module
 * marker TIDAL_MARKER_SYMBOL of abi/tidal_abi.h and each kernel's
 * NAME__tidal_reshaped clone), and with --extract-ptx writes the PTX images out. */
#define _POSIX_C_SOURCE 200809L
#include "ptx.h"
#include "tidal_abi.h"
#include "util.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#ifndef TIDAL_VERSION
#error "TIDAL_VERSION (the CMake project version) is defined by CMakeLists.txt"
#endif

#define EM_CUDA_MACHINE 190
#define STO_CUDA_ENTRY 0x10
#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_KIND_PTX 1
#define FATBIN_KIND_ELF 2
#define FATBIN_KIND_LTOIR 8
#define FATBIN_FLAG_LZ4 0x2000u
#define FATBIN_FLAG_ZSTD 0x8000u
/* entry flags of an arch-specific (sm_90a) and a family-specific (sm_100f) image, as
 * fatbinary 13 writes them */
#define FATBIN_FLAG_ARCH_SPECIFIC 0x100000u
#define FATBIN_FLAG_FAMILY_SPECIFIC 0x200000u

/* CUDA ELF e_flags (LLVM's BinaryFormat/ELF.h): OS/ABI 0x33 (v1) keeps the SM in bits
 * 0-7 and sets 0x800 for sm_90a; OS/ABI 0x41 (v2, CUDA 12.8+) keeps it in bits 8-15 and
 * sets 0x8 for an 'a' target. */
#define ELFOSABI_CUDA_V1 0x33
#define ELFOSABI_CUDA_V2 0x41
#define EF_CUDA_ACCELERATORS_V1 0x800u
#define EF_CUDA_ACCELERATORS_V2 0x8u
/* .nv.compat: records of u8 format, u8 attribute, u16 value (format 4: size, then that
 * many bytes). ptxas 13.0 leaves e_flags' 'a' bit clear and records an arch-specific
 * target (sm_90a, sm_100a, sm_120a) as attribute 9 = 1 (0 for sm_90, sm_100f, sm_120). */
#define NV_COMPAT_ARCH_SPECIFIC 9

static const char usage_text[] = "usage: tidal-objdump [--extract-ptx DIR] FILE...\n"
                                 "\n"
                                 "Lists the GPU code in each FILE and says which kernels carry the tidal rewrite.\n"
                                 "FILE may be a cubin, a fatbin, a host object, executable or shared library\n"
                                 "(its .nv_fatbin and __nv_relfatbin sections), or a PTX file. For every cubin\n"
                                 "and PTX image it prints the target and each kernel: 'rewritten' when the module\n"
                                 "has tidal's marker (" TIDAL_MARKER_SYMBOL ") and the kernel its\n"
                                 "NAME" TIDAL_RESHAPED_SUFFIX " clone, 'not rewritten' otherwise (clones are listed\n"
                                 "under their kernel). PTX images compressed with ZSTD (CUDA 13) are decompressed.\n"
                                 "\n"
                                 "options:\n"
                                 "  --extract-ptx DIR  write every PTX image to DIR/FILE.N.ptx (N: image index)\n"
                                 "  --help             show this help\n"
                                 "  --version          show the version\n"
                                 "\n"
                                 "exit status: 0 success, 1 unreadable or malformed input, 2 usage error.\n";

typedef struct ctx {
    const char *file;
    const char *extract_dir;
    unsigned image; /* running index of images in this file */
    int err;
} ctx;

/* Prints the kernels of one image given its entry names and whether the
 * module carries the marker. */
static void print_kernels(char **names, size_t n, bool marker)
{
    size_t kernels = 0, rewritten = 0;
    size_t sl = strlen(TIDAL_RESHAPED_SUFFIX);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(names[i]);
        if (tidal_ends_with(names[i], TIDAL_RESHAPED_SUFFIX)) continue;
        bool has_clone = false;
        for (size_t j = 0; j < n && !has_clone; j++)
            has_clone = strlen(names[j]) == len + sl && !strncmp(names[j], names[i], len) &&
                        !strcmp(names[j] + len, TIDAL_RESHAPED_SUFFIX);
        bool rw = marker && has_clone;
        kernels++;
        rewritten += rw;
        printf("      %s: %s\n", names[i], rw ? "rewritten" : "not rewritten");
    }
    printf("      (%zu kernels, %zu rewritten)\n", kernels, rewritten);
}

/* Checks that the ELF header, program and section header tables and every section's
 * bytes lie inside the `size` bytes of the file (libelf reads a truncated file without
 * complaint, its sections just vanish). Returns 0, or -1 with the problem in `why`. */
static int elf_check_bounds(Elf *e, size_t size, char *why, size_t n)
{
    GElf_Ehdr eh;
    size_t shnum, shstrndx;
    if (!gelf_getehdr(e, &eh)) {
        snprintf(why, n, "%s", elf_errmsg(-1));
        return -1;
    }
    /* the header's own counts: libelf reports no sections at all when their table is cut */
    if (eh.e_shoff && (eh.e_shoff > size || eh.e_shentsize > size - eh.e_shoff)) {
        snprintf(why, n, "the section headers (offset %llu) start past the end of the file",
                 (unsigned long long)eh.e_shoff);
        return -1;
    }
    if (elf_getshdrnum(e, &shnum) || elf_getshdrstrndx(e, &shstrndx)) {
        snprintf(why, n, "%s", elf_errmsg(-1));
        return -1;
    }
    if (eh.e_shnum && shnum != eh.e_shnum) shnum = eh.e_shnum;
    if (eh.e_phnum && (eh.e_phoff > size || (uint64_t)eh.e_phnum * eh.e_phentsize > size - eh.e_phoff)) {
        snprintf(why, n, "the program headers (offset %llu, %u of %u bytes) end past the end of the file",
                 (unsigned long long)eh.e_phoff, (unsigned)eh.e_phnum, (unsigned)eh.e_phentsize);
        return -1;
    }
    if (shnum && (eh.e_shoff > size || (uint64_t)shnum * eh.e_shentsize > size - eh.e_shoff)) {
        snprintf(why, n, "the section headers (offset %llu, %zu of %u bytes) end past the end of the file",
                 (unsigned long long)eh.e_shoff, shnum, (unsigned)eh.e_shentsize);
        return -1;
    }
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) {
            snprintf(why, n, "%s", elf_errmsg(-1));
            return -1;
        }
        if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL) continue;
        if (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset) {
            const char *name = elf_strptr(e, shstrndx, sh.sh_name);
            snprintf(why, n, "section %s (offset %llu, %llu bytes) ends past the end of the file", name ? name : "?",
                     (unsigned long long)sh.sh_offset, (unsigned long long)sh.sh_size);
            return -1;
        }
    }
    return 0;
}

/* 1 when the cubin's .nv.compat marks an arch-specific target ('a'). */
static int compat_arch_specific(Elf *e)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(e, &shstrndx)) return 0;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        const char *name;
        if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstrndx, sh.sh_name)) || strcmp(name, ".nv.compat"))
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        const unsigned char *p = d ? d->d_buf : NULL;
        size_t len = d && p ? d->d_size : 0;
        for (size_t off = 0; off + 4 <= len;) {
            unsigned fmt = p[off], attr = p[off + 1], val = p[off + 2] | (unsigned)p[off + 3] << 8;
            if (fmt == 0) break;
            if (attr == NV_COMPAT_ARCH_SPECIFIC && fmt != 4) return val != 0;
            off += 4 + (fmt == 4 ? val : 0);
        }
    }
    return 0;
}

/* "sm_90", "sm_90a", ...: the SM from e_flags, the suffix from e_flags or .nv.compat,
 * else `hint` (the fatbin entry's 'a'/'f', "" when none). */
static void cubin_arch(Elf *e, const GElf_Ehdr *eh, const char *hint, char *buf, size_t n)
{
    unsigned char osabi = eh->e_ident[EI_OSABI];
    unsigned lo = eh->e_flags & 0xff, hi = (eh->e_flags >> 8) & 0xff, sm;
    bool accel;
    if (osabi == ELFOSABI_CUDA_V2) {
        sm = hi;
        accel = eh->e_flags & EF_CUDA_ACCELERATORS_V2;
    } else if (osabi == ELFOSABI_CUDA_V1) {
        sm = lo;
        accel = eh->e_flags & EF_CUDA_ACCELERATORS_V1;
    } else {
        sm = lo >= 20 ? lo : hi;
        accel = false;
    }
    const char *suffix = accel || compat_arch_specific(e) ? "a" : hint;
    snprintf(buf, n, "sm_%u%s", sm, suffix);
}

static void cubin_report(ctx *c, const char *data, size_t size, const char *where, const char *hint)
{
    Elf *e = elf_memory((char *)data, size);
    GElf_Ehdr eh;
    char why[256];
    if (!e || !gelf_getehdr(e, &eh) || eh.e_machine != EM_CUDA_MACHINE) {
        fprintf(stderr, "%s: %s: not a CUDA ELF image\n", c->file, where);
        c->err = 1;
        if (e) elf_end(e);
        return;
    }
    if (elf_check_bounds(e, size, why, sizeof why)) {
        fprintf(stderr, "%s: %s: truncated or corrupt CUDA ELF image: %s\n", c->file, where, why);
        c->err = 1;
        elf_end(e);
        return;
    }
    char arch[32];
    cubin_arch(e, &eh, hint, arch, sizeof arch);
    char **names = NULL;
    size_t n = 0, cap = 0;
    bool marker = false;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB) continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; d && i < count; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(d, (int)i, &sym)) continue;
            const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
            if (!name) continue;
            if (!strcmp(name, TIDAL_MARKER_SYMBOL)) marker = true;
            if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && (sym.st_other & STO_CUDA_ENTRY)) {
                if (n == cap) {
                    cap = cap ? cap * 2 : 16;
                    char **nn = realloc(names, cap * sizeof *nn);
                    if (!nn) ptx_ice("out of memory");
                    names = nn;
                }
                names[n++] = strdup(name);
            }
        }
    }
    printf("  [%u] cubin %s (%s, %zu bytes)%s\n", c->image++, arch, where, size, marker ? ", tidal marker" : "");
    print_kernels(names, n, marker);
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    elf_end(e);
}

static void ptx_report(ctx *c, const char *text, size_t size, const char *where)
{
    while (size && text[size - 1] == 0) size--; /* fatbin payloads are NUL-padded */
    unsigned index = c->image++;
    ptx_diag d;
    ptx_module *m = ptx_parse(c->file, text, size, &d);
    if (!m) {
        printf("  [%u] ptx (%s, %zu bytes): cannot parse: line %u:%u: %s\n", index, where, size, d.line, d.col, d.msg);
        c->err = 1;
        return;
    }
    bool marker = false;
    for (uint32_t i = 0; i < m->nitems; i++)
        if (m->items[i].kind == PTX_ITEM_VAR && ptx_tok_is(m, m->items[i].name_tok, TIDAL_MARKER_SYMBOL)) marker = true;
    char **names = calloc(ptx_func_count(m) + 1, sizeof *names);
    size_t n = 0;
    for (uint32_t i = 0; i < ptx_func_count(m); i++) {
        ptx_func *f = ptx_func_at(m, i);
        if (f->is_entry && f->has_body) names[n++] = (char *)ptx_func_name(f);
    }
    printf("  [%u] ptx %s, PTX %u.%u (%s, %zu bytes)%s\n", index, m->target[0] ? m->target : "?", m->version_major,
           m->version_minor, where, size, marker ? ", tidal marker" : "");
    print_kernels(names, n, marker);
    free(names);
    ptx_module_free(m);
    if (c->extract_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.%u.ptx", c->extract_dir, tidal_base_name(c->file), index);
        if (tidal_write_file(path, text, size)) {
            fprintf(stderr, "tidal-objdump: cannot write '%s': %s\n", path, strerror(errno));
            c->err = 1;
        } else {
            printf("      extracted to %s\n", path);
        }
    }
}

/* One or more fatbin containers back to back. */
static void fatbin_report(ctx *c, const unsigned char *p, size_t size, const char *where)
{
    size_t off = 0;
    while (off + 16 <= size) {
        uint32_t magic;
        uint16_t hsize;
        uint64_t payload;
        memcpy(&magic, p + off, 4);
        if (magic != FATBIN_MAGIC) {
            if (off == 0) {
                fprintf(stderr, "%s: %s: not a fatbin (magic 0x%08x)\n", c->file, where, magic);
                c->err = 1;
            }
            return; /* padding after the last container */
        }
        memcpy(&hsize, p + off + 6, 2);
        memcpy(&payload, p + off + 8, 8);
        size_t e = off + hsize, end = off + hsize + payload;
        if (end > size || hsize < 16) {
            fprintf(stderr, "%s: %s: truncated fatbin container at offset %zu\n", c->file, where, off);
            c->err = 1;
            return;
        }
        while (e + 64 <= end) {
            uint16_t kind;
            uint32_t ehs, csize, arch;
            uint64_t psize, flags, dsize;
            memcpy(&kind, p + e, 2);
            memcpy(&ehs, p + e + 4, 4);
            memcpy(&psize, p + e + 8, 8);
            memcpy(&csize, p + e + 16, 4);
            memcpy(&arch, p + e + 28, 4);
            memcpy(&flags, p + e + 40, 8);
            memcpy(&dsize, p + e + 56, 8);
            if (ehs < 64 || e + ehs + psize > end) {
                fprintf(stderr, "%s: %s: malformed fatbin entry at offset %zu\n", c->file, where, e);
                c->err = 1;
                return;
            }
            const unsigned char *data = p + e + ehs;
            char desc[160];
            const char *sfx = flags & FATBIN_FLAG_ARCH_SPECIFIC ? "a" : flags & FATBIN_FLAG_FAMILY_SPECIFIC ? "f" : "";
            if (kind == FATBIN_KIND_ELF) {
                snprintf(desc, sizeof desc, "%s, fatbin entry", where);
                if (flags & (FATBIN_FLAG_ZSTD | FATBIN_FLAG_LZ4) && csize) {
                    printf("  [%u] cubin sm_%u%s (%s): compressed, not inspected\n", c->image++, arch, sfx, desc);
                } else {
                    cubin_report(c, (const char *)data, psize, desc, sfx);
                }
            } else if (kind == FATBIN_KIND_PTX) {
                if (flags & FATBIN_FLAG_ZSTD && csize) {
                    if (csize > psize || dsize > ((uint64_t)1 << 30)) {
                        fprintf(stderr, "%s: %s: malformed compressed PTX entry at offset %zu\n", c->file, where, e);
                        c->err = 1;
                        return;
                    }
                    char *out = malloc(dsize + 1);
                    size_t got = out ? ZSTD_decompress(out, dsize, data, csize) : 0;
                    if (!out || ZSTD_isError(got)) {
                        fprintf(stderr, "%s: %s: cannot decompress a PTX image: %s\n", c->file, where,
                                out ? ZSTD_getErrorName(got) : "out of memory");
                        c->err = 1;
                    } else {
                        snprintf(desc, sizeof desc, "%s, fatbin entry, zstd %u -> %zu bytes", where, csize, got);
                        ptx_report(c, out, got, desc);
                    }
                    free(out);
                } else if (flags & FATBIN_FLAG_LZ4 && csize) {
                    printf("  [%u] ptx compute_%u%s (%s): LZ4-compressed (older CUDA), not inspected\n", c->image++,
                           arch, sfx, where);
                } else {
                    snprintf(desc, sizeof desc, "%s, fatbin entry", where);
                    ptx_report(c, (const char *)data, psize, desc);
                }
            } else if (kind == FATBIN_KIND_LTOIR) {
                printf("  [%u] LTO-IR sm_%u%s (%s): not inspected\n", c->image++, arch, sfx, where);
            } else {
                printf("  [%u] unknown fatbin entry kind %u (%s)\n", c->image++, kind, where);
            }
            e += ehs + psize;
        }
        off = end;
        off = (off + 7) & ~(size_t)7;
    }
}

static void host_report(ctx *c, Elf *e)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(e, &shstrndx)) {
        fprintf(stderr, "%s: cannot read the ELF file: %s\n", c->file, elf_errmsg(-1));
        c->err = 1;
        return;
    }
    bool any = false;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) continue;
        const char *name = elf_strptr(e, shstrndx, sh.sh_name);
        if (!name || (strcmp(name, ".nv_fatbin") && strcmp(name, "__nv_relfatbin"))) continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d || !d->d_buf) continue;
        any = true;
        fatbin_report(c, d->d_buf, d->d_size, name);
    }
    if (!any) printf("  no GPU code (.nv_fatbin / __nv_relfatbin sections)\n");
}

static int dump_file(const char *path, const char *extract_dir)
{
    size_t size;
    char *data = ptx_read_file(path, &size);
    if (!data) {
        fprintf(stderr, "tidal-objdump: cannot read '%s': %s\n", path, strerror(errno));
        return 1;
    }
    ctx c = {.file = path, .extract_dir = extract_dir};
    uint32_t magic = 0;
    if (size >= 4) memcpy(&magic, data, 4);
    if (size >= 20 && !memcmp(data, "\177ELF", 4)) {
        uint16_t machine;
        memcpy(&machine, data + 18, 2);
        /* a truncated or corrupt file is an error, not "no GPU code" */
        Elf *e = elf_memory(data, size);
        char why[256];
        if (!e || elf_check_bounds(e, size, why, sizeof why)) {
            if (!e) snprintf(why, sizeof why, "%s", elf_errmsg(-1));
            fprintf(stderr, "%s: truncated or corrupt ELF file (%zu bytes): %s\n", path, size, why);
            c.err = 1;
        } else if (machine == EM_CUDA_MACHINE) {
            printf("%s: cubin\n", path);
            cubin_report(&c, data, size, "file", "");
        } else {
            printf("%s: host ELF\n", path);
            host_report(&c, e);
        }
        if (e) elf_end(e);
    } else if (magic == FATBIN_MAGIC) {
        printf("%s: fatbin\n", path);
        fatbin_report(&c, (const unsigned char *)data, size, "file");
    } else {
        size_t i = 0;
        while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r')) i++;
        if (i < size && (data[i] == '.' || data[i] == '/')) {
            printf("%s: PTX\n", path);
            ptx_report(&c, data, size, "file");
        } else {
            fprintf(stderr, "%s: not a cubin, fatbin, ELF file or PTX\n", path);
            c.err = 1;
        }
    }
    free(data);
    return c.err;
}

int main(int argc, char **argv)
{
    ptx_set_fatal_handler(tidal_driver_fatal);
    const char *extract = NULL;
    int first = 1;
    for (; first < argc; first++) {
        if (!strcmp(argv[first], "--help") || !strcmp(argv[first], "-h")) {
            fputs(usage_text, stdout);
            return 0;
        } else if (!strcmp(argv[first], "--version")) {
            puts("tidal-objdump (tidal) " TIDAL_VERSION);
            puts("recognises the rewrite by " TIDAL_MARKER_SYMBOL " and NAME" TIDAL_RESHAPED_SUFFIX);
            return 0;
        } else if (!strcmp(argv[first], "--extract-ptx")) {
            if (first + 1 >= argc) {
                fputs("tidal-objdump: --extract-ptx needs a directory\ntry 'tidal-objdump --help'\n", stderr);
                return 2;
            }
            extract = argv[++first];
        } else if (argv[first][0] == '-' && argv[first][1]) {
            fprintf(stderr, "tidal-objdump: unknown option '%s'\ntry 'tidal-objdump --help'\n", argv[first]);
            return 2;
        } else {
            break;
        }
    }
    if (first >= argc) {
        fputs("tidal-objdump: no input file\ntry 'tidal-objdump --help'\n", stderr);
        return 2;
    }
    if (elf_version(EV_CURRENT) == EV_NONE) ptx_ice("libelf: %s", elf_errmsg(-1));
    int rc = 0;
    for (int i = first; i < argc; i++) rc |= dump_file(argv[i], extract);
    return rc;
}
