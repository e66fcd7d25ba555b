C     A Fortran 77 consumer of the installed library: DNGEMM (the BLAS
C     extension, called as DGEMM would be) on 7 x 9 times 9 x 6
C     non-negative matrices of small integers, B transposed, checked
C     against a plain loop. The results must be exact; STOP 1 on a
C     mismatch.
      PROGRAM CONSUM
      INTEGER M, N, K
      PARAMETER (M = 7, N = 6, K = 9)
      DOUBLE PRECISION A(M,K), BT(N,K), C(M,N), W(M,N), ALPHA, BETA
      INTEGER I, J, P, NBAD
C
      ALPHA = 2.0D0
      BETA = 0.5D0
      DO 20 P = 1, K
         DO 10 I = 1, M
            A(I,P) = DBLE(MOD(I + 2*P, 5))
   10    CONTINUE
         DO 15 J = 1, N
            BT(J,P) = DBLE(MOD(3*P + J, 4))
   15    CONTINUE
   20 CONTINUE
      DO 40 J = 1, N
         DO 30 I = 1, M
            C(I,J) = DBLE(I + J)
            W(I,J) = BETA*C(I,J)
            DO 25 P = 1, K
               W(I,J) = W(I,J) + ALPHA*A(I,P)*BT(J,P)
   25       CONTINUE
   30    CONTINUE
   40 CONTINUE
C
      CALL DNGEMM('N', 'T', M, N, K, ALPHA, A, M, BT, N, BETA, C, M)
C
      NBAD = 0
      DO 60 J = 1, N
         DO 50 I = 1, M
            IF (C(I,J) .NE. W(I,J)) THEN
               WRITE (*, '(A,2I3,2F10.1)') ' MISMATCH ', I, J, C(I,J),
     $            W(I,J)
               NBAD = NBAD + 1
            END IF
   50    CONTINUE
   60 CONTINUE
      IF (NBAD .NE. 0) STOP 1
      WRITE (*, '(A)') ' fortran consumer: OK'
      END
