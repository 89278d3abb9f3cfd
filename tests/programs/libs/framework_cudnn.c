/* A framework library linked against one cuDNN major (built twice: against libcudnn.so.8 and
 * against libcudnn.so.9), so one process can hold two, as when two frameworks are imported. */
#include <stddef.h>
size_t cudnnGetVersion(void);
size_t FRAMEWORK_FN(void) { return cudnnGetVersion(); }
