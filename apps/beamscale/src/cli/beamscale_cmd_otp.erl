%% @doc `beamscale otp install RELEASE[-FLAVOUR] | list': OTP releases built from Debian's
%% source packages beside the system's (beamscale_otp, beamscale_otp_build; docs/otp.md).
-module(beamscale_cmd_otp).
-behaviour(beamscale_cmd).

-export([info/0, do/1, format_error/1]).

%% @doc This command's name, summary and options.
-spec info() -> beamscale_cmd:info().
info() ->
    Releases = [R ++ " (" ++ S ++ ")" || {R, S} <- beamscale_otp:releases()],
    #{name => "otp", summary => "build and list OTP releases to run benchmarks on",
      usage => "beamscale otp install RELEASE[-jit|-emu|-lcnt] [--prefix DIR] [--jobs N] | list",
      details => "install: Debian's erlang source package of the release's suite ("
                 ++ lists:join(", ", Releases) ++ "),\nbuilt into ~/.cache/beamscale/otp/NAME "
                 "($BEAMSCALE_OTP_DIR) and usable as --otp NAME or\n{erls, [{Alias, \"NAME\"}]}. "
                 "Flavours: jit (default), emu (the interpreter), lcnt (lock\ncounting). The "
                 "system's own release builds only its emulator (--full: everything).\n"
                 "list: the installs, their versions and build times.",
      options => [{prefix, "--prefix", string, "install here instead"},
                  {jobs, "--jobs", integer, "make's jobs", {text, "the logical cores"}},
                  {full, "--full", flag, "build everything even for the system's release"},
                  {force, "--force", flag, "build again over an install"}]}.

%% @doc Install or list.
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{args := ["install", Name], opts := Opts}) ->
    case beamscale_otp:parse(Name) of
        {ok, Release} -> install(Name, Release, Opts);
        {error, _} = Error -> Error
    end;
do(#{args := ["list"]}) ->
    case beamscale_otp:installs() of
        [] -> io:format("no OTP installed under ~ts~n", [beamscale_otp:root()]);
        Installs ->
            io:format("~-10s ~-12s ~9s  ~s~n", ["name", "version", "build", "erl"]),
            [io:format("~-10s ~-12s ~8bs  ~ts~n", [N, V, S, E])
             || #{name := N, version := V, seconds := S, erl := E} <- Installs],
            ok
    end;
do(#{args := Args}) ->
    {error, {usage, Args}}.

install(Name, Release, Opts) ->
    Given = maps:with([prefix, jobs, full, force], Opts),
    case beamscale_otp_build:install(Release, Given#{prefix => prefix(Release, Opts)}) of
        {ok, #{dir := Dir, seconds := S, mode := Mode, cpu_seconds := Cpu}} ->
            io:format("OTP ~s installed in ~ts (~s) in ~bm~2..0bs, ~bm~2..0bs of CPU~n",
                      [Name, Dir, Mode, S div 60, S rem 60, Cpu div 60, Cpu rem 60]);
        {error, {_, {installed, _}} = Reason} -> {error, Reason};
        {error, Reason} -> {failed, ["otp install ", Name, ": ", beamscale_error:format(Reason)]}
    end.

prefix(Release, Opts) ->
    filename:absname(maps:get(prefix, Opts, beamscale_otp:dir(Release))).

%% @doc One line for this command's errors.
-spec format_error(term()) -> iodata().
format_error({usage, Args}) ->
    ["expected install RELEASE[-FLAVOUR] or list, not: ", lists:join(" ", Args)].
