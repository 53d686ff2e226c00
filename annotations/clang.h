/* libclang, opened at run time (annotations/clang.c): the C API of clang's front end that
 * annotations/derive.c reads kernels with. Only the types and functions Tutti uses, as the
 * library's stable C ABI defines them (clang-c/Index.h is not needed to build); a host without
 * libclang still runs, without derived regions (doc/split.md, "Automatic splitting"). */
#ifndef TUTTI_ANN_CLANG_H
#define TUTTI_ANN_CLANG_H

#include <stdbool.h>
#include <stddef.h>

typedef void *CXIndex;
typedef struct CXTranslationUnitImpl *CXTranslationUnit;
typedef void *CXClientData;
typedef void *CXDiagnostic;
typedef void *CXEvalResult;

typedef struct {
  const void *data;
  unsigned private_flags;
} CXString;

typedef struct {
  int kind;
  int xdata;
  const void *data[3];
} CXCursor;

typedef struct {
  int kind;
  void *data[2];
} CXType;

typedef struct {
  const void *ptr_data[2];
  unsigned int_data;
} CXSourceLocation;

typedef struct {
  const void *ptr_data[2];
  unsigned begin_int_data, end_int_data;
} CXSourceRange;

typedef struct {
  unsigned int_data[4];
  void *ptr_data;
} CXToken;

struct CXUnsavedFile {
  const char *Filename;
  const char *Contents;
  unsigned long Length;
};

enum { CXChildVisit_Break, CXChildVisit_Continue, CXChildVisit_Recurse };
typedef int (*CXCursorVisitor)(CXCursor cursor, CXCursor parent, CXClientData data);

/* The cursor kinds, type kinds and other values read (their numbers in the C API). */
enum {
  CXCursor_FunctionDecl = 8,
  CXCursor_VarDecl = 9,
  CXCursor_ParmDecl = 10,
  CXCursor_UnexposedExpr = 100,
  CXCursor_DeclRefExpr = 101,
  CXCursor_MemberRefExpr = 102,
  CXCursor_CallExpr = 103,
  CXCursor_IntegerLiteral = 106,
  CXCursor_CharacterLiteral = 110,
  CXCursor_ParenExpr = 111,
  CXCursor_UnaryOperator = 112,
  CXCursor_ArraySubscriptExpr = 113,
  CXCursor_BinaryOperator = 114,
  CXCursor_CompoundAssignOperator = 115,
  CXCursor_ConditionalOperator = 116,
  CXCursor_CStyleCastExpr = 117,
  CXCursor_UnaryExpr = 136,
  CXCursor_CompoundStmt = 202,
  CXCursor_IfStmt = 205,
  CXCursor_SwitchStmt = 206,
  CXCursor_WhileStmt = 207,
  CXCursor_DoStmt = 208,
  CXCursor_ForStmt = 209,
  CXCursor_GotoStmt = 210,
  CXCursor_ContinueStmt = 212,
  CXCursor_BreakStmt = 213,
  CXCursor_ReturnStmt = 214,
  CXCursor_NullStmt = 230,
  CXCursor_DeclStmt = 231,
  CXType_Bool = 3, /* the built-in integer types run from here */
  CXType_Int128 = 20, /* to here */
  CXType_FirstBuiltin = 2,
  CXType_LastBuiltin = 40,
  CXType_Pointer = 101,
  CXType_ExtVector = 176,
  CXToken_Punctuation = 0,
  CXDiagnostic_Error = 3,
  CXEval_Int = 1,
  CXTranslationUnit_KeepGoing = 0x200,
  CXCursor_TypeRef = 43,
};

/* The functions, looked up by name. */
struct tt_clang {
  CXIndex (*createIndex)(int, int);
  void (*disposeIndex)(CXIndex);
  CXTranslationUnit (*parseTranslationUnit)(CXIndex, const char *, const char *const *, int,
                                            struct CXUnsavedFile *, unsigned, unsigned);
  void (*disposeTranslationUnit)(CXTranslationUnit);
  unsigned (*getNumDiagnostics)(CXTranslationUnit);
  CXDiagnostic (*getDiagnostic)(CXTranslationUnit, unsigned);
  int (*getDiagnosticSeverity)(CXDiagnostic);
  CXString (*getDiagnosticSpelling)(CXDiagnostic);
  void (*disposeDiagnostic)(CXDiagnostic);
  CXCursor (*getTranslationUnitCursor)(CXTranslationUnit);
  unsigned (*visitChildren)(CXCursor, CXCursorVisitor, CXClientData);
  int (*getCursorKind)(CXCursor);
  CXString (*getCursorSpelling)(CXCursor);
  CXCursor (*getCursorReferenced)(CXCursor);
  CXCursor (*getCursorDefinition)(CXCursor);
  unsigned (*equalCursors)(CXCursor, CXCursor);
  int (*Cursor_isNull)(CXCursor);
  CXType (*getCursorType)(CXCursor);
  CXType (*getPointeeType)(CXType);
  CXType (*getCanonicalType)(CXType);
  long long (*Type_getSizeOf)(CXType);
  CXString (*getTypeSpelling)(CXType);
  CXSourceRange (*getCursorExtent)(CXCursor);
  CXSourceLocation (*getCursorLocation)(CXCursor);
  int (*Location_isInSystemHeader)(CXSourceLocation);
  void (*tokenize)(CXTranslationUnit, CXSourceRange, CXToken **, unsigned *);
  void (*disposeTokens)(CXTranslationUnit, CXToken *, unsigned);
  CXString (*getTokenSpelling)(CXTranslationUnit, CXToken);
  int (*getTokenKind)(CXToken);
  CXSourceRange (*getTokenExtent)(CXTranslationUnit, CXToken);
  CXSourceLocation (*getRangeEnd)(CXSourceRange);
  CXSourceLocation (*getRangeStart)(CXSourceRange);
  void (*getSpellingLocation)(CXSourceLocation, void **, unsigned *, unsigned *, unsigned *);
  CXEvalResult (*Cursor_Evaluate)(CXCursor);
  int (*EvalResult_getKind)(CXEvalResult);
  long long (*EvalResult_getAsLongLong)(CXEvalResult);
  void (*EvalResult_dispose)(CXEvalResult);
  const char *(*getCString)(CXString);
  void (*disposeString)(CXString);
};

/* libclang's functions, opened once: the library `name` when not NULL (TUTTI_LIBCLANG), else
 * the usual names and folders of versions 20 down to 11; or NULL with why set (the library is
 * missing, or lacks a function). Thread-safe; the first call decides, the library stays
 * open. */
const struct tt_clang *tt_clang_open(const char *name, char *why, size_t whylen);

#endif
