// timealign's stand-in (see ../../README.md): Duration is declared beside Time in time.hpp.
#include "builtin_interfaces/msg/time.hpp"
