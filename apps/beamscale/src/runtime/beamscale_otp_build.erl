%% @doc `beamscale otp install': an OTP release built from Debian's source package. A private
%% apt state (its own sources.list with the suite's `deb-src', lists and cache under the
%% install root) finds the upstream tarball and its SHA-256 in the signed Sources index, so
%% the system's apt sources stay as they are; the tarball is fetched by `apt-helper' and
%% checked against that hash. Debian's patches are not applied (they concern packaging).
%%
%% A full build configures, makes and installs into a staging directory that is renamed into
%% place once complete, the marker file written last; a failed step leaves nothing
%% `beamscale otp list' shows. When the release is the system's own (same erts version), only
%% the emulator is built and the system's libraries are reused (`emulator_only').
-module(beamscale_otp_build).

-export([install/2, whereabouts/2, suites/1, format_error/1]).
-ifdef(TEST).
%% A cut download tested against a server of the test's own (Debian's mirror is not reached).
-export([download/4]).
-endif.

%% Left out of a full build: GUI and Java bindings, protocols no benchmark uses, and tools that
%% only run on a developer's node. Kept: erts, kernel, stdlib, compiler, runtime_tools, tools,
%% crypto, ssl, public_key, asn1, mnesia, inets, os_mon, sasl, syntax_tools, parsetools, eunit,
%% xmerl, eldap, erl_interface (mandatory).
-define(LEFT_OUT, ["javac", "wx", "odbc", "jinterface", "megaco", "diameter", "debugger",
                   "observer", "et", "reltool", "dialyzer", "snmp", "ssh", "common_test",
                   "edoc", "ftp", "tftp"]).
-define(MIN, 60000).
-define(TICK, 20000).
%% The process dictionary's key of the install's CPU seconds so far (one install per process).
-define(CPU, {?MODULE, cpu_seconds}).

-type opts() :: #{prefix => file:filename(), jobs => pos_integer(), full => boolean(),
                  force => boolean()}.

%% @doc Build and install `Release'; what was installed and how long it took.
-spec install(beamscale_otp:release(), opts()) ->
    {ok, #{dir := file:filename(), seconds := non_neg_integer(), mode := atom(),
           cpu_seconds := non_neg_integer()}} |
    {error, {?MODULE, term()}}.
install(Release, Opts) ->
    Name = beamscale_otp:name(Release),
    Final = maps:get(prefix, Opts, beamscale_otp:dir(Release)),
    Work = filename:join([beamscale_otp:root(), ".build", Name]),
    Log = Work ++ ".log",
    Start = erlang:monotonic_time(second),
    erase(?CPU),
    try
        ok = filelib:ensure_dir(Log),
        ok = file:write_file(Log, []),
        exists(Final, Opts),
        Tarball = fetch(Release, Log),
        Mode = steps(Release, Tarball, #{work => Work, final => Final, log => Log,
                                        opts => Opts, name => Name, start => Start}),
        {ok, #{dir => Final, seconds => erlang:monotonic_time(second) - Start, mode => Mode,
               cpu_seconds => round(cpu_seconds())}}
    catch
        throw:{?MODULE, _} = Error -> {error, Error}
    end.

exists(Final, Opts) ->
    case filelib:is_regular(filename:join(Final, beamscale_otp:marker())) andalso
         not maps:get(force, Opts, false) of
        true -> throw({?MODULE, {installed, Final}});
        false -> ours_or_absent(Final)
    end.

%% The install replaces `Final' only when it is an install of ours (its marker) or an empty
%% directory: a `--prefix' naming a directory with anything else in it is refused, before the
%% build and again before the swap, and nothing of it is deleted.
ours_or_absent(Final) ->
    Ours = filelib:is_regular(filename:join(Final, beamscale_otp:marker())),
    case file:read_link_info(Final) of
        {error, enoent} -> ok;
        {ok, _} when Ours -> ok;
        {ok, _} ->
            case file:list_dir(Final) of
                {ok, []} -> ok;
                _ -> throw({?MODULE, {not_ours, Final}})
            end;
        {error, _} -> throw({?MODULE, {not_ours, Final}})
    end.

%%% The source: a private apt state per suite, the tarball checked against its index

%% @doc The Debian suites asked for a release's source, its own first, then the others newest
%% first: sid's index once listed 29.1.2 while the mirror answered 404, and forky carried 29.1.1.
-spec suites(string()) -> [string()].
suites(Own) -> [Own | [S || S <- ["sid", "forky", "trixie", "bookworm"], S =/= Own]].

%% The first suite whose index lists the release and whose mirror holds its tarball; which
%% version was taken from where is said.
fetch(#{suite := Own} = Release, Log) -> fetch(suites(Own), Release, Log).

fetch([Suite | Rest], Release, Log) ->
    try fetch_from(Release#{suite := Suite}, Log) of
        Dest ->
            progress("took ~s from ~s", [filename:basename(Dest), Suite]),
            Dest
    catch
        throw:{?MODULE, {Why, _} = Reason} when Rest =/= [], Why =:= no_source ->
            progress("~s: ~ts; trying ~s", [Suite, format_error(Reason), hd(Rest)]),
            fetch(Rest, Release, Log);
        throw:{?MODULE, {not_on_mirror, _, _} = Reason} when Rest =/= [] ->
            progress("~s: ~ts; trying ~s", [Suite, format_error(Reason), hd(Rest)]),
            fetch(Rest, Release, Log)
    end.

fetch_from(#{suite := Suite, release := Rel}, Log) ->
    Apt = filename:join([beamscale_otp:root(), ".apt", Suite]),
    [ok = filelib:ensure_path(filename:join(Apt, D))
     || D <- ["lists/partial", "archives/partial", "parts"]],
    List = filename:join(Apt, "sources.list"),
    ok = file:write_file(List, ["deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
                                " http://deb.debian.org/debian ", Suite, " main\n"]),
    AptOpts = apt_opts(Apt, List),
    progress("apt-get update (~s's sources)", [Suite]),
    step(download, "/usr/bin/apt-get", AptOpts ++ ["update"], Apt, Log, 10 * ?MIN),
    {0, Text} = beamscale_os:cmd("/usr/bin/apt-cache", AptOpts ++ ["showsrc", "erlang"], ?MIN),
    {File, Sha} = orig(binary_to_list(Text), Rel),
    Dest = filename:join(Apt, File),
    download(Dest, "http://deb.debian.org/debian/pool/main/e/erlang/" ++ File, Sha, Log),
    Dest.

apt_opts(Apt, List) ->
    lists:append([["-o", K ++ "=" ++ V]
                  || {K, V} <- [{"Dir::Etc::sourcelist", List},
                                {"Dir::Etc::sourceparts", filename:join(Apt, "parts")},
                                {"Dir::State", Apt}, {"Dir::State::status", "/dev/null"},
                                {"Dir::Cache", Apt}]]).

%% The upstream tarball of the release in `apt-cache showsrc' text: its name and SHA-256.
orig(Text, Rel) ->
    Pattern = "^ ([0-9a-f]{64}) [0-9]+ (erlang_" ++ Rel ++ "[0-9.]*\\+dfsg\\.orig\\.tar\\.xz)$",
    case re:run(Text, Pattern, [multiline, {capture, all_but_first, list}]) of
        {match, [Sha, File]} -> {File, Sha};
        nomatch -> throw({?MODULE, {no_source, Rel}})
    end.

%% The tarball at `Url' to `Dest' (unless it is there with hash `Sha'), its output to `Log'; a
%% failed or cut download leaves no part of it.
-spec download(file:filename(), string(), string(), file:filename()) -> ok.
download(Dest, Url, Sha, Log) ->
    case sha256(Dest) of
        Sha -> progress("source ~s (cached)", [filename:basename(Dest)]);
        _ ->
            progress("download ~s", [Url]),
            Before = filelib:file_size(Log),
            try
                step(download, "/usr/lib/apt/apt-helper",
                     ["download-file", Url, Dest, "SHA256:" ++ Sha], "/", Log, 30 * ?MIN)
            catch
                throw:{?MODULE, {failed, download, _, _, _}} = Failed ->
                    partial_gone(Dest),
                    not_found(Failed, Url, Before);
                Class:Reason:Stack ->
                    partial_gone(Dest),
                    erlang:raise(Class, Reason, Stack)
            end
    end.

%% A cut download leaves no part of the tarball in the cache (apt-helper writes it in place).
partial_gone(Dest) ->
    _ = [file:delete(F) || F <- [Dest, Dest ++ ".FAILED"]],
    ok.

%% The index can list a tarball the mirror does not hold yet (sid's 29.1.2 did): say so.
-spec not_found({?MODULE, term()}, string(), non_neg_integer()) -> no_return().
not_found({?MODULE, {failed, download, _, Log, _}} = Failed, Url, Before) ->
    {ok, Text} = file:read_file(Log),
    Scope = {scope, {Before, byte_size(Text) - Before}},
    case binary:match(Text, <<"404  Not Found">>, [Scope]) of
        nomatch -> throw(Failed);
        _ -> throw({?MODULE, {not_on_mirror, Url, Log}})
    end.

sha256(File) ->
    case file:read_file(File) of
        {ok, Bin} -> string:lowercase(binary_to_list(binary:encode_hex(crypto:hash(sha256,
                                                                                    Bin))));
        {error, _} -> none
    end.

%%% Configure, make, install

steps(Release, Tarball, #{work := Work, log := Log, final := Final} = S) ->
    Version = version(Tarball),
    Mode = mode(Version, S),
    progress("unpack into ~ts", [Work]),
    step(unpack, "/bin/sh", ["-c", "rm -rf \"$0\" && mkdir -p \"$0\" && "
                             "tar -xJf \"$1\" -C \"$0\" --strip-components=1", Work, Tarball],
         "/", Log, 10 * ?MIN),
    Prefix = case Mode of full -> Final; emulator_only -> code:root_dir() end,
    Configure = ["--prefix=" ++ Prefix | configure_flags(Release)],
    progress("configure ~s", [lists:join(" ", Configure)]),
    step(configure, "./configure", Configure, Work, Log, 30 * ?MIN),
    Stage = Final ++ ".partial",
    _ = beamscale_os:cmd("/bin/rm", ["-rf", Stage], 10 * ?MIN),
    build(Mode, Release, Stage, S),
    Seconds = erlang:monotonic_time(second) - maps:get(start, S),
    ok = file:write_file(filename:join(Stage, beamscale_otp:marker()),
                         io_lib:format("~p.~n~p.~n~p.~n~p.~n~p.~n",
                                       [{version, Version}, {seconds, Seconds}, {mode, Mode},
                                        {cpu_seconds, round(cpu_seconds())},
                                        {configure, Configure}])),
    ours_or_absent(Final),
    _ = beamscale_os:cmd("/bin/rm", ["-rf", Final], 10 * ?MIN),
    ok = file:rename(Stage, Final),
    _ = beamscale_os:cmd("/bin/rm", ["-rf", Work], 10 * ?MIN),
    Mode.

version(Tarball) ->
    {match, [V]} = re:run(filename:basename(Tarball), "^erlang_([0-9.]+)\\+",
                          [{capture, all_but_first, list}]),
    V.

%% The system's release at the same version: its libraries are those this source builds.
mode(Version, #{opts := Opts}) ->
    File = filename:join([code:root_dir(), "releases", erlang:system_info(otp_release),
                          "OTP_VERSION"]),
    System = case file:read_file(File) of
                 {ok, Bin} -> string:trim(binary_to_list(Bin));
                 {error, _} -> none
             end,
    case System =:= Version andalso not maps:get(full, Opts, false) of
        true -> emulator_only;
        false -> full
    end.

configure_flags(#{flavour := F}) ->
    ["--without-" ++ A || A <- ?LEFT_OUT] ++
        case F of
            jit -> [];
            emu -> ["--disable-jit"];
            lcnt -> ["--enable-lock-counter"]
        end.

build(full, Release, Stage, #{work := Work, log := Log, opts := Opts, final := Final}) ->
    Jobs = "-j" ++ integer_to_list(maps:get(jobs, Opts, beamscale_os:logical_cores())),
    progress("make ~s (the log: ~ts)", [Jobs, Log]),
    ticking(fun() -> step(make, "/usr/bin/make", [Jobs], Work, Log, 600 * ?MIN) end,
            Log, Work),
    lcnt_type(Release, Jobs, Work, Log),
    progress("make install into ~ts", [Stage]),
    step(install, "/usr/bin/make", ["install", "DESTDIR=" ++ Stage], Work, Log, 30 * ?MIN),
    Inside = Stage ++ Final,
    ok = file:rename(Inside, Stage ++ ".tmp"),
    _ = beamscale_os:cmd("/bin/rm", ["-rf", Stage], 10 * ?MIN),
    ok = file:rename(Stage ++ ".tmp", Stage),
    lcnt_wrapper(Release, Work, Stage, Final);
build(emulator_only, Release, Stage, #{work := Work, log := Log, opts := Opts, final := Final}) ->
    Jobs = "-j" ++ integer_to_list(maps:get(jobs, Opts, beamscale_os:logical_cores())),
    progress("make ~s emulator (the system's libraries are reused; the log: ~ts)", [Jobs, Log]),
    %% The top level's `emulator' (erts, as bootstrapping builds it); erts's programs include
    %% erl_call, which is erl_interface's.
    Type = case Release of #{flavour := lcnt} -> ["TYPE=lcnt"]; _ -> [] end,
    ticking(fun() ->
                    step(make, "/usr/bin/make", [Jobs, "erl_interface"], Work, Log, 60 * ?MIN),
                    step(make, "/usr/bin/make", [Jobs, "emulator" | Type], Work, Log,
                         600 * ?MIN)
            end, Log, Work),
    beamscale_otp_files:assemble(Release, Work, Stage, Final).

%% The lock-counting emulator is a second emulator type, started by `-emu_type lcnt'.
lcnt_type(#{flavour := lcnt}, Jobs, Work, Log) ->
    progress("make ~s emulator TYPE=lcnt", [Jobs]),
    step(make, "/usr/bin/make", [Jobs, "emulator", "TYPE=lcnt"], Work, Log, 600 * ?MIN);
lcnt_type(_, _, _, _) -> ok.

lcnt_wrapper(#{flavour := lcnt}, Work, Stage, Final) ->
    beamscale_otp_files:lcnt_wrapper(Work, Stage, Final);
lcnt_wrapper(_, _, _, _) -> ok.

%% One step, its output appended to the log; a failure names the step and the log's last line.
%% The shell's `times' says the CPU time of everything the step ran (make waits for its
%% compilers), added to the install's total: the build's cost on a quiet host, whatever the
%% host's load made of its wall time.
step(Step, Exe, Args, Dir, Log, Timeout) ->
    Script = "cd \"$0\" && log=\"$1\" && shift 2 && \"$@\" >>\"$log\" 2>&1; s=$?; times; exit $s",
    case beamscale_os:cmd("/bin/sh", ["-c", Script, Dir, Log, "--", Exe | Args], Timeout) of
        {0, Times} -> add_cpu(Times);
        {Status, _} -> throw({?MODULE, {failed, Step, Status, Log, last_line(Log)}})
    end.

%% `times' prints the shell's user and system time, then its children's.
add_cpu(Times) ->
    case re:run(Times, "([0-9]+)m([0-9.]+)s", [global, {capture, all_but_first, list}]) of
        {match, [_, _, [UM, US], [SM, SS]]} ->
            Cpu = 60 * list_to_integer(UM) + list_to_float(US)
                + 60 * list_to_integer(SM) + list_to_float(SS),
            put(?CPU, cpu_seconds() + Cpu),
            ok;
        _ -> ok
    end.

cpu_seconds() ->
    case get(?CPU) of
        undefined -> 0.0;
        Cpu -> Cpu
    end.

last_line(Log) ->
    {ok, Bin} = file:read_file(Log),
    case [L || L <- binary:split(Bin, <<"\n">>, [global]), L =/= <<>>] of
        [] -> <<>>;
        Lines -> lists:last(Lines)
    end.

%% A long step shows, every few seconds, how long it has run and where make is.
ticking(Fun, Log, Work) ->
    Start = erlang:monotonic_time(second),
    Ticker = spawn_link(fun() -> tick(Start, Log, Work) end),
    try Fun() after unlink(Ticker), exit(Ticker, kill) end.

tick(Start, Log, Work) ->
    receive after ?TICK -> ok end,
    Secs = erlang:monotonic_time(second) - Start,
    progress("  ~bm~2..0bs ~ts", [Secs div 60, Secs rem 60, whereabouts(tail(Log), Work)]),
    tick(Start, Log, Work).

%% @doc Where a build is, read from its log's tail: the directory make entered last (relative
%% to the source tree `Work') and the last step OTP's quiet make printed (` CC\tobj/.../x.o').
%% Both are what make is doing now; the last application entered is not (erl_interface stays
%% the last one entered while erts's emulator compiles).
-spec whereabouts(binary(), file:filename()) -> string().
whereabouts(Tail, Work) ->
    Dir = case last_match(Tail, "Entering directory '([^']+)'") of
              [D] -> "in " ++ relative(D, Work);
              none -> "starting"
          end,
    case last_match(Tail, "^ ([A-Z]+)\t+(\\S+)") of
        [Verb, File] -> lists:flatten([Dir, ": ", Verb, " ", filename:basename(File)]);
        none -> Dir
    end.

last_match(Bin, Re) ->
    case re:run(Bin, Re, [global, multiline, {capture, all_but_first, list}]) of
        {match, Matches} -> lists:last(Matches);
        nomatch -> none
    end.

relative(Dir, Work) ->
    case string:prefix(Dir, Work ++ "/") of
        nomatch when Dir =:= Work -> ".";
        nomatch -> Dir;
        Rest -> Rest
    end.

tail(Log) ->
    {ok, F} = file:open(Log, [read, binary, raw]),
    Size = filelib:file_size(Log),
    {ok, Bin} = case file:pread(F, max(0, Size - 65536), 65536) of
                    eof -> {ok, <<>>};
                    Read -> Read
                end,
    ok = file:close(F),
    Bin.

progress(Format, Args) -> io:format(Format ++ "~n", Args).

%% @doc One line for this module's errors.
-spec format_error(term()) -> iodata().
format_error({not_ours, Dir}) ->
    io_lib:format("~ts exists and is not an install of beamscale (no marker file): refused, "
                  "nothing in it deleted (name a new or empty directory)", [Dir]);
format_error({installed, Dir}) ->
    io_lib:format("already installed in ~ts (--force builds it again)", [Dir]);
format_error({no_source, Rel}) ->
    ["no erlang source package of OTP ", Rel, " in the suite's Sources index"];
format_error({not_on_mirror, Url, Log}) ->
    io_lib:format("the suite's Sources index lists ~ts but the mirror answers 404 Not Found "
                  "for it; nothing installed (the log: ~ts)", [Url, Log]);
format_error({failed, download, S, Log, Last}) ->
    io_lib:format("download failed (exit ~p): ~ts (the log: ~ts)", [S, Last, Log]);
format_error({failed, Step, S, Log, Last}) ->
    io_lib:format("~s failed (exit ~p), nothing installed: ~ts (the log: ~ts)",
                  [Step, S, Last, Log]).
