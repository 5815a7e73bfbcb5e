%% Reading a scenario first loads the parser's code (`beamscale_load_bounded:load_code/1'); on
%% a busy host that alone can pass a test's 5 s, so the including module's tests run once it is
%% loaded.
eunit_wrapper_(Tests) ->
    {setup, fun() -> beamscale_load_bounded:load_code([xmerl, beamscale_load]) end, Tests}.
