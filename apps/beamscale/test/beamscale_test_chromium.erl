%% Test helper: headless Chromium on a report page, to check what a person would see: the DOM
%% after rendering, the number of series each chart draws, and a screenshot.
-module(beamscale_test_chromium).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([run/3, series/1, url/1, charts/1, screenshot/3]).

-define(CHROMIUM_TIMEOUT_S, 60).

%% The charts of a rendered DOM, each the text from its `<svg' on.
charts(Dom) -> tl(binary:split(Dom, <<"<svg">>, [global])).

%% The number of series a chart draws; its `data-series' must say the same.
series(Chart) ->
    {match, [N]} = re:run(Chart, "data-series=\"([0-9]+)\"", [{capture, [1], binary}]),
    Groups = length(binary:matches(Chart, <<"class=\"series\"">>)),
    ?assertEqual(binary_to_integer(N), Groups),
    Groups.

url(File) -> "file://" ++ filename:absname(File).

%% A screenshot of the page in the test's log dir, linked from the log; returns its path.
screenshot(Chromium, Config, Index) ->
    Shot = filename:join(?config(priv_dir, Config), "index.png"),
    _ = run(Chromium, Config, ["--screenshot=" ++ Shot, "--window-size=1400,3000", url(Index)]),
    ct:log("screenshot: <a href=\"~ts\">~ts</a>", [Shot, Shot]),
    Shot.

%% Headless Chromium, bounded by coreutils' timeout; as root it needs --no-sandbox.
run(Chromium, Config, Args) ->
    Profile = filename:join(?config(priv_dir, Config), "chromium-profile"),
    %% Chromium's complaints (no D-Bus here) go to /dev/null, not into the DOM or the log.
    Port = open_port({spawn_executable, "/bin/sh"},
                     [{args, ["-c", "exec \"$@\" 2>/dev/null", "sh", "timeout",
                              integer_to_list(?CHROMIUM_TIMEOUT_S), Chromium, "--headless",
                              "--no-sandbox", "--disable-gpu", "--user-data-dir=" ++ Profile
                              | Args]},
                      exit_status, binary, use_stdio]),
    collect(Port, <<>>).

collect(Port, Acc) ->
    receive
        {Port, {data, D}} -> collect(Port, <<Acc/binary, D/binary>>);
        {Port, {exit_status, 0}} -> Acc;
        {Port, {exit_status, S}} -> ct:fail({chromium_exit, S, Acc})
    end.
