build/obj/libcommon/src/err.o: libcommon/src/err.c \
 libcommon/include/cm/err.h
libcommon/include/cm/err.h:
