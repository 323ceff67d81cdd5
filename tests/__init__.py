"""hwlib's tests: one file per module, named after it (serving/ and training/ mirror hwlib's packages), and the
checks that span the library or the book."""
