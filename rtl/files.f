// The one ordered RTL file list (Verilator, Yosys, vendor flows read only this).
// Packages first, then leaf blocks, then the blocks that instantiate them.
// --- packages ---
// --- prim ---
// --- fp ---
// --- act ---
// --- pe ---
// --- engine ---
