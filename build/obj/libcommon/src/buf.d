build/obj/libcommon/src/buf.o: libcommon/src/buf.c \
 libcommon/include/cm/buf.h libcommon/include/cm/alloc.h
libcommon/include/cm/buf.h:
libcommon/include/cm/alloc.h:
