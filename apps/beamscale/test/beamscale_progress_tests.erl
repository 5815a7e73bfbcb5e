-module(beamscale_progress_tests).
-include_lib("eunit/include/eunit.hrl").

%% The elapsed time is given, so the text does not depend on how fast a loaded host runs this.
line_test() ->
    P = beamscale_progress:at_job(beamscale_progress:new(4, quiet), 1, "big @ otp/default/1/1"),
    Line = lists:flatten(io_lib:format("~s", [beamscale_progress:line(P, 0)])),
    ?assertMatch("[1/4] big @ otp/default/1/1   0s elapsed, estimating", Line),
    P2 = beamscale_progress:at_job(P, 3, "ets_test @ otp/default/2/1"),
    Line2 = lists:flatten(io_lib:format("~s", [beamscale_progress:line(P2, 0)])),
    ?assertMatch("[3/4] ets_test @ otp/default/2/1   0s elapsed, ~0s left", Line2),
    %% Two of four jobs took 130 s: the two left take about as long.
    Line3 = lists:flatten(io_lib:format("~s", [beamscale_progress:line(P2, 130)])),
    ?assertMatch("[3/4] ets_test @ otp/default/2/1   2m10s elapsed, ~2m10s left", Line3),
    %% line/1 reads the clock: a fresh state is under a minute old.
    ?assertMatch({match, _}, re:run(beamscale_progress:line(P), "\\d+s elapsed, estimating")).
