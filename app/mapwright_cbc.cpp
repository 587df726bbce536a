// mapwright-cbc: one CBC solve per process, for CoSA (see engine/search/mip_solver.h).
// Reads a request on stdin, writes the solution on stdout.
#include "search/mip_solver.h"

#include <unistd.h>

int main() {
    return mw::runMipSolverHelper(STDIN_FILENO, STDOUT_FILENO);
}
