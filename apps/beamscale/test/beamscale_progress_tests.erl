-module(beamscale_progress_tests).
-include_lib("eunit/include/eunit.hrl").

line_test() ->
    P = beamscale_progress:at_job(beamscale_progress:new(4, quiet), 1, "big @ otp/default/1/1"),
    Line = lists:flatten(io_lib:format("~s", [beamscale_progress:line(P)])),
    ?assertMatch("[1/4] big @ otp/default/1/1   0s elapsed, estimating", Line),
    P2 = beamscale_progress:at_job(P, 3, "ets_test @ otp/default/2/1"),
    Line2 = lists:flatten(io_lib:format("~s", [beamscale_progress:line(P2)])),
    ?assertMatch("[3/4] ets_test @ otp/default/2/1   0s elapsed, ~0s left", Line2).
