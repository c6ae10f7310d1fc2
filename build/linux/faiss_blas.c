/* One BLAS for the Linux bundle: faiss's BLAS and LAPACK calls answered by numpy's OpenBLAS.
 *
 * The faiss-cpu wheel ships its own OpenBLAS (38.7 MB, plus libgfortran and libquadmath) beside numpy's
 * (25.4 MB). build/orkas.spec builds this file into a library with the file name faiss's libfaiss.so asks
 * for, in place of the wheel's, so faiss loads numpy's instead. faiss calls the 32-bit-integer (LP64)
 * Fortran interface (`sgemm_`); numpy's OpenBLAS has only the 64-bit-integer one, under its own names
 * (`scipy_sgemm_64_`). Each function below widens its integer arguments, calls numpy's, and narrows what
 * comes back (an info code, pivot indices, a workspace size). Integer arrays are copied both ways.
 *
 * These are the 14 symbols libfaiss.so 1.15.1 imports from its BLAS (`nm -D --undefined-only`); the spec
 * checks that list against the wheel at build time, so a faiss that needs another one fails the build.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef int32_t fint;    /* faiss's FINTEGER */
typedef int64_t bint;    /* numpy's OpenBLAS integer */
typedef size_t flen;     /* gfortran's hidden length of a CHARACTER argument */

void scipy_sgemm_64_(const char *, const char *, const bint *, const bint *, const bint *, const float *,
                     const float *, const bint *, const float *, const bint *, const float *, float *,
                     const bint *, flen, flen);
void scipy_dgemm_64_(const char *, const char *, const bint *, const bint *, const bint *, const double *,
                     const double *, const bint *, const double *, const bint *, const double *, double *,
                     const bint *, flen, flen);
void scipy_sgemv_64_(const char *, const bint *, const bint *, const float *, const float *, const bint *,
                     const float *, const bint *, const float *, float *, const bint *, flen);
void scipy_ssyrk_64_(const char *, const char *, const bint *, const bint *, const float *, const float *,
                     const bint *, const float *, float *, const bint *, flen, flen);
void scipy_sgeqrf_64_(const bint *, const bint *, float *, const bint *, float *, float *, const bint *, bint *);
void scipy_sorgqr_64_(const bint *, const bint *, const bint *, float *, const bint *, const float *, float *,
                      const bint *, bint *);
void scipy_sgesvd_64_(const char *, const char *, const bint *, const bint *, float *, const bint *, float *,
                      float *, const bint *, float *, const bint *, float *, const bint *, bint *, flen, flen);
void scipy_dgesvd_64_(const char *, const char *, const bint *, const bint *, double *, const bint *, double *,
                      double *, const bint *, double *, const bint *, double *, const bint *, bint *, flen, flen);
void scipy_sgetrf_64_(const bint *, const bint *, float *, const bint *, bint *, bint *);
void scipy_dgetrf_64_(const bint *, const bint *, double *, const bint *, bint *, bint *);
void scipy_sgetri_64_(const bint *, float *, const bint *, const bint *, float *, const bint *, bint *);
void scipy_dgetri_64_(const bint *, double *, const bint *, const bint *, double *, const bint *, bint *);
void scipy_dsyev_64_(const char *, const char *, const bint *, double *, const bint *, double *, double *,
                     const bint *, bint *, flen, flen);
void scipy_sgelsd_64_(const bint *, const bint *, const bint *, float *, const bint *, float *, const bint *,
                      float *, const float *, bint *, float *, const bint *, bint *, bint *);

#define W(x) bint w_##x = *(x)
#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* The workspace-size answer (lwork = -1) is a float in work[0]; the rest are ints to narrow. */
static void narrow(fint *to, const bint *from, bint n) {
    for (bint i = 0; i < n; i++) to[i] = (fint)from[i];
}

static bint *widened(const fint *from, bint n) {
    bint *to = malloc(sizeof(bint) * (size_t)(n > 0 ? n : 1));
    if (to && from)
        for (bint i = 0; i < n; i++) to[i] = from[i];
    return to;
}

int sgemm_(const char *ta, const char *tb, const fint *m, const fint *n, const fint *k, const float *alpha,
           const float *a, const fint *lda, const float *b, const fint *ldb, const float *beta, float *c,
           const fint *ldc) {
    W(m); W(n); W(k); W(lda); W(ldb); W(ldc);
    scipy_sgemm_64_(ta, tb, &w_m, &w_n, &w_k, alpha, a, &w_lda, b, &w_ldb, beta, c, &w_ldc, 1, 1);
    return 0;
}

int dgemm_(const char *ta, const char *tb, const fint *m, const fint *n, const fint *k, const double *alpha,
           const double *a, const fint *lda, const double *b, const fint *ldb, const double *beta, double *c,
           const fint *ldc) {
    W(m); W(n); W(k); W(lda); W(ldb); W(ldc);
    scipy_dgemm_64_(ta, tb, &w_m, &w_n, &w_k, alpha, a, &w_lda, b, &w_ldb, beta, c, &w_ldc, 1, 1);
    return 0;
}

int sgemv_(const char *trans, const fint *m, const fint *n, const float *alpha, const float *a, const fint *lda,
           const float *x, const fint *incx, const float *beta, float *y, const fint *incy) {
    W(m); W(n); W(lda); W(incx); W(incy);
    scipy_sgemv_64_(trans, &w_m, &w_n, alpha, a, &w_lda, x, &w_incx, beta, y, &w_incy, 1);
    return 0;
}

int ssyrk_(const char *uplo, const char *trans, const fint *n, const fint *k, const float *alpha, const float *a,
           const fint *lda, const float *beta, float *c, const fint *ldc) {
    W(n); W(k); W(lda); W(ldc);
    scipy_ssyrk_64_(uplo, trans, &w_n, &w_k, alpha, a, &w_lda, beta, c, &w_ldc, 1, 1);
    return 0;
}

int sgeqrf_(const fint *m, const fint *n, float *a, const fint *lda, float *tau, float *work, const fint *lwork,
            fint *info) {
    W(m); W(n); W(lda); W(lwork);
    bint w_info = 0;
    scipy_sgeqrf_64_(&w_m, &w_n, a, &w_lda, tau, work, &w_lwork, &w_info);
    *info = (fint)w_info;
    return 0;
}

int sorgqr_(const fint *m, const fint *n, const fint *k, float *a, const fint *lda, const float *tau, float *work,
            const fint *lwork, fint *info) {
    W(m); W(n); W(k); W(lda); W(lwork);
    bint w_info = 0;
    scipy_sorgqr_64_(&w_m, &w_n, &w_k, a, &w_lda, tau, work, &w_lwork, &w_info);
    *info = (fint)w_info;
    return 0;
}

int sgesvd_(const char *ju, const char *jvt, const fint *m, const fint *n, float *a, const fint *lda, float *s,
            float *u, const fint *ldu, float *vt, const fint *ldvt, float *work, const fint *lwork, fint *info) {
    W(m); W(n); W(lda); W(ldu); W(ldvt); W(lwork);
    bint w_info = 0;
    scipy_sgesvd_64_(ju, jvt, &w_m, &w_n, a, &w_lda, s, u, &w_ldu, vt, &w_ldvt, work, &w_lwork, &w_info, 1, 1);
    *info = (fint)w_info;
    return 0;
}

int dgesvd_(const char *ju, const char *jvt, const fint *m, const fint *n, double *a, const fint *lda, double *s,
            double *u, const fint *ldu, double *vt, const fint *ldvt, double *work, const fint *lwork, fint *info) {
    W(m); W(n); W(lda); W(ldu); W(ldvt); W(lwork);
    bint w_info = 0;
    scipy_dgesvd_64_(ju, jvt, &w_m, &w_n, a, &w_lda, s, u, &w_ldu, vt, &w_ldvt, work, &w_lwork, &w_info, 1, 1);
    *info = (fint)w_info;
    return 0;
}

int sgetrf_(const fint *m, const fint *n, float *a, const fint *lda, fint *ipiv, fint *info) {
    W(m); W(n); W(lda);
    bint w_info = 0, pivots = MIN(w_m, w_n);
    bint *w_ipiv = widened(NULL, pivots);
    if (!w_ipiv) { *info = -5; return 0; }
    scipy_sgetrf_64_(&w_m, &w_n, a, &w_lda, w_ipiv, &w_info);
    narrow(ipiv, w_ipiv, pivots);
    free(w_ipiv);
    *info = (fint)w_info;
    return 0;
}

int dgetrf_(const fint *m, const fint *n, double *a, const fint *lda, fint *ipiv, fint *info) {
    W(m); W(n); W(lda);
    bint w_info = 0, pivots = MIN(w_m, w_n);
    bint *w_ipiv = widened(NULL, pivots);
    if (!w_ipiv) { *info = -5; return 0; }
    scipy_dgetrf_64_(&w_m, &w_n, a, &w_lda, w_ipiv, &w_info);
    narrow(ipiv, w_ipiv, pivots);
    free(w_ipiv);
    *info = (fint)w_info;
    return 0;
}

int sgetri_(const fint *n, float *a, const fint *lda, const fint *ipiv, float *work, const fint *lwork, fint *info) {
    W(n); W(lda); W(lwork);
    bint w_info = 0;
    bint *w_ipiv = widened(ipiv, w_n);
    if (!w_ipiv) { *info = -4; return 0; }
    scipy_sgetri_64_(&w_n, a, &w_lda, w_ipiv, work, &w_lwork, &w_info);
    free(w_ipiv);
    *info = (fint)w_info;
    return 0;
}

int dgetri_(const fint *n, double *a, const fint *lda, const fint *ipiv, double *work, const fint *lwork,
            fint *info) {
    W(n); W(lda); W(lwork);
    bint w_info = 0;
    bint *w_ipiv = widened(ipiv, w_n);
    if (!w_ipiv) { *info = -4; return 0; }
    scipy_dgetri_64_(&w_n, a, &w_lda, w_ipiv, work, &w_lwork, &w_info);
    free(w_ipiv);
    *info = (fint)w_info;
    return 0;
}

int dsyev_(const char *jobz, const char *uplo, const fint *n, double *a, const fint *lda, double *w, double *work,
           const fint *lwork, fint *info) {
    W(n); W(lda); W(lwork);
    bint w_info = 0;
    scipy_dsyev_64_(jobz, uplo, &w_n, a, &w_lda, w, work, &w_lwork, &w_info, 1, 1);
    *info = (fint)w_info;
    return 0;
}

/* iwork's size is not passed: ask numpy's LAPACK for it (a workspace query fills iwork[0]), then lend it a
 * 64-bit array of that size. A query from faiss (lwork = -1) gets the same answer, narrowed. */
int sgelsd_(const fint *m, const fint *n, const fint *nrhs, float *a, const fint *lda, float *b, const fint *ldb,
            float *s, const float *rcond, fint *rank, float *work, const fint *lwork, fint *iwork, fint *info) {
    W(m); W(n); W(nrhs); W(lda); W(ldb); W(lwork);
    bint w_rank = 0, w_info = 0, query = -1, liwork = 1;
    float size = 0;
    scipy_sgelsd_64_(&w_m, &w_n, &w_nrhs, a, &w_lda, b, &w_ldb, s, rcond, &w_rank, &size, &query, &liwork, &w_info);
    if (w_info != 0 || w_lwork == -1) {
        if (w_lwork == -1) { work[0] = size; iwork[0] = (fint)liwork; }
        *info = (fint)w_info;
        return 0;
    }
    bint *w_iwork = widened(NULL, liwork);
    if (!w_iwork) { *info = -13; return 0; }
    scipy_sgelsd_64_(&w_m, &w_n, &w_nrhs, a, &w_lda, b, &w_ldb, s, rcond, &w_rank, work, &w_lwork, w_iwork, &w_info);
    free(w_iwork);
    *rank = (fint)w_rank;
    *info = (fint)w_info;
    return 0;
}
