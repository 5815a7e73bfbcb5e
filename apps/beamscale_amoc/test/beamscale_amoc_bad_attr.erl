%% A module whose -required_variable is no variable's (beamscale_amoc_vars_tests reads it).
-module(beamscale_amoc_bad_attr).
-required_variable(not_a_variable).
