C     Fixed-form Fortran: CSA101 because of the GO TO out of the loop.
      SUBROUTINE FIND( A, B, N, KEY, POS )
      INTEGER N, KEY, POS, I
      INTEGER A( N ), B( N )
      CALL BUILTIN_CSA_PARALLEL_LOOP()
      DO 10 I = 1, N
         IF( A( I ).EQ.KEY ) GO TO 20
         B( I ) = 0
   10 CONTINUE
      POS = -1
      RETURN
   20 POS = I
      RETURN
      END
