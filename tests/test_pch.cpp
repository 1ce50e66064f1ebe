// SPDX-License-Identifier: Apache-2.0
// Carries the engine tests' precompiled header; built as a tiny executable so its
// compile flags match the test executables that reuse the header.
int main() { return 0; }
