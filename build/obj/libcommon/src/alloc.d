build/obj/libcommon/src/alloc.o: libcommon/src/alloc.c \
 libcommon/include/cm/alloc.h
libcommon/include/cm/alloc.h:
