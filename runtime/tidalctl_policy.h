/* tidalctl_policy.h — `tidalctl policy FILE` (tidalctl_policy.c). */
#ifndef TIDALCTL_POLICY_H
#define TIDALCTL_POLICY_H

/* Prints the policy state in path (a table, or the JSON as written when json); the exit
 * status: 0, or 1 for a missing or malformed file (the error on stderr). */
int tidalctl_policy(const char *path, int json);

#endif
