/* llvm_clone.c — cloning helpers of the IR-level tidal transform: globals of a
 * LLVMCloneModule mapped back to the original, bodies moved between
 * functions, attributes, and the K__tidal_reshaped declaration. */
#include "llvm_internal.h"
#include "tidal_abi.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ cloning */

/* Replaces every global of `clone` (a LLVMCloneModule of `orig`, same order)
 * with the original one, so blocks moved over refer to the original module. */
void tl_map_globals(LLVMModuleRef clone, LLVMModuleRef orig)
{
    static const struct {
        LLVMValueRef (*first)(LLVMModuleRef);
        LLVMValueRef (*next)(LLVMValueRef);
    } lists[] = {
        {LLVMGetFirstGlobal, LLVMGetNextGlobal},
        {LLVMGetFirstFunction, LLVMGetNextFunction},
        {LLVMGetFirstGlobalAlias, LLVMGetNextGlobalAlias},
        {LLVMGetFirstGlobalIFunc, LLVMGetNextGlobalIFunc},
    };
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++)
        for (LLVMValueRef a = lists[k].first(clone), b = lists[k].first(orig); a && b;
             a = lists[k].next(a), b = lists[k].next(b))
            LLVMReplaceAllUsesWith(a, b);
}

LLVMValueRef tl_nth_function(LLVMModuleRef m, unsigned idx)
{
    LLVMValueRef f = LLVMGetFirstFunction(m);
    for (unsigned i = 0; f && i < idx; i++) f = LLVMGetNextFunction(f);
    return f;
}

/* Moves all blocks of `from` to the end of `to`; `from`'s first n arguments
 * become `to`'s. Returns the first moved block. */
LLVMBasicBlockRef tl_move_body(LLVMValueRef from, LLVMValueRef to, unsigned nparams)
{
    for (unsigned i = 0; i < nparams; i++) LLVMReplaceAllUsesWith(LLVMGetParam(from, i), LLVMGetParam(to, i));
    LLVMBasicBlockRef first = LLVMGetFirstBasicBlock(from);
    LLVMBasicBlockRef b;
    while ((b = LLVMGetFirstBasicBlock(from))) {
        LLVMRemoveBasicBlockFromParent(b);
        LLVMAppendExistingBasicBlock(to, b);
    }
    return first;
}

/* Function attributes that the protocol makes false (it loops, synchronises
 * and touches memory outside the arguments). */
void tl_drop_wrong_attrs(LLVMValueRef f)
{
    static const char *const kinds[] = {"memory",   "nosync",    "willreturn", "mustprogress", "readnone",
                                        "readonly", "writeonly", "argmemonly", "nofree",       NULL};
    for (int i = 0; kinds[i]; i++) {
        unsigned k = LLVMGetEnumAttributeKindForName(kinds[i], strlen(kinds[i]));
        if (k) LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, k);
    }
}

static void copy_attrs(LLVMValueRef from, LLVMValueRef to, LLVMAttributeIndex idx)
{
    unsigned n = LLVMGetAttributeCountAtIndex(from, idx);
    if (!n) return;
    LLVMAttributeRef *a = calloc(n, sizeof *a);
    if (!a) tl_oom();
    LLVMGetAttributesAtIndex(from, idx, a);
    for (unsigned i = 0; i < n; i++) LLVMAddAttributeAtIndex(to, idx, a[i]);
    free(a);
}

char *tl_suffixed_name(LLVMValueRef k, const char *suffix)
{
    size_t nl, sl = strlen(suffix);
    const char *kn = LLVMGetValueName2(k, &nl);
    char *name = malloc(nl + sl + 1);
    if (!name) tl_oom();
    memcpy(name, kn, nl);
    memcpy(name + nl, suffix, sl + 1);
    return name;
}

/* K__tidal_reshaped: K's type plus a trailing `ptr byval(tidal_launch) align 8`. */
LLVMValueRef tl_make_clone_decl(irb *x, LLVMValueRef k, LLVMTypeRef launch_ty)
{
    LLVMTypeRef fty = LLVMGlobalGetValueType(k);
    unsigned np = LLVMCountParamTypes(fty);
    LLVMTypeRef *pt = calloc(np + 1, sizeof *pt);
    if (!pt) tl_oom();
    LLVMGetParamTypes(fty, pt);
    pt[np] = x->p0;
    LLVMTypeRef nty = LLVMFunctionType(LLVMGetReturnType(fty), pt, np + 1, LLVMIsFunctionVarArg(fty));
    free(pt);
    char *name = tl_suffixed_name(k, TIDAL_RESHAPED_SUFFIX);
    LLVMValueRef r = LLVMAddFunction(x->m, name, nty);
    free(name);
    LLVMSetFunctionCallConv(r, LLVMGetFunctionCallConv(k));
    LLVMSetLinkage(r, LLVMGetLinkage(k));
    LLVMSetVisibility(r, LLVMGetVisibility(k));
    copy_attrs(k, r, LLVMAttributeFunctionIndex);
    copy_attrs(k, r, LLVMAttributeReturnIndex);
    for (unsigned i = 0; i < np; i++) {
        copy_attrs(k, r, i + 1);
        size_t pl;
        const char *pn = LLVMGetValueName2(LLVMGetParam(k, i), &pl);
        LLVMSetValueName2(LLVMGetParam(r, i), pn, pl);
    }
    unsigned kbyval = LLVMGetEnumAttributeKindForName("byval", 5);
    unsigned kalign = LLVMGetEnumAttributeKindForName("align", 5);
    unsigned knoundef = LLVMGetEnumAttributeKindForName("noundef", 7);
    LLVMAddAttributeAtIndex(r, np + 1, LLVMCreateTypeAttribute(x->c, kbyval, launch_ty));
    LLVMAddAttributeAtIndex(r, np + 1, LLVMCreateEnumAttribute(x->c, kalign, 8));
    LLVMAddAttributeAtIndex(r, np + 1, LLVMCreateEnumAttribute(x->c, knoundef, 0));
    LLVMSetValueName2(LLVMGetParam(r, np), "__tidal_launch", 14);
    return r;
}
