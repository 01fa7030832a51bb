// Anchor source for the static libraries that hold one Verilated model each
// (farnn_verilated_model in cmake/farnn_verilator.cmake): the generated model
// sources are added to the library by verilate().
