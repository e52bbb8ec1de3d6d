/* remote.h — this process as a tidald tenant (remote.c), started and stopped by init.c
 * without the lock (the watcher thread takes it to apply tidald's partitions). */
#ifndef TIDAL_REMOTE_H
#define TIDAL_REMOTE_H

/* TIDAL_OK, TIDAL_ERR_NOT_FOUND (no tidald: partitions stay local), or an error. */
int tidal__remote_start(void);
void tidal__remote_stop(void);

#endif
