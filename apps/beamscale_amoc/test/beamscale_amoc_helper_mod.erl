%% A helper module of a scenario: its variable is the scenario's too (beamscale_amoc_vars_tests).
-module(beamscale_amoc_helper_mod).
-required_variable(#{name => helper_var, description => "a helper's", default_value => 1}).
