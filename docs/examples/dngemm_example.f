C     Multiplies two small non-negative matrices with the Level 3 BLAS:
C     C := ALPHA*A*B + BETA*C, then prints C.
C
C     dgemm_example.f calls DGEMM; dngemm_example.f is the same program
C     with that one call renamed DNGEMM (xNGEMM's BLAS extension).  The
C     entries are small non-negative integers, so every product and sum
C     is exact and both programs must print the same numbers.
      PROGRAM EXAMPL
      INTEGER M, N, K
      PARAMETER (M = 7, N = 6, K = 9)
      DOUBLE PRECISION A(M,K), B(K,N), C(M,N), ALPHA, BETA
      INTEGER I, J
C
      DO 20 J = 1, K
         DO 10 I = 1, M
            A(I,J) = DBLE(MOD(I + 2*J, 5))
   10    CONTINUE
   20 CONTINUE
      DO 40 J = 1, N
         DO 30 I = 1, K
            B(I,J) = DBLE(MOD(3*I + J, 4))
   30    CONTINUE
   40 CONTINUE
      DO 60 J = 1, N
         DO 50 I = 1, M
            C(I,J) = DBLE(I + J)
   50    CONTINUE
   60 CONTINUE
      ALPHA = 2.0D0
      BETA = 0.5D0
C
      CALL DNGEMM('N', 'N', M, N, K, ALPHA, A, M, B, K, BETA, C, M)
C
      WRITE (*, '(A)') ' C = ALPHA*A*B + BETA*C:'
      DO 70 I = 1, M
         WRITE (*, '(6F10.1)') (C(I,J), J = 1, N)
   70 CONTINUE
      END
