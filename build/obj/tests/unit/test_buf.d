build/obj/tests/unit/test_buf.o: tests/unit/test_buf.c \
 libcommon/include/cm/buf.h
libcommon/include/cm/buf.h:
